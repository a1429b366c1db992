// Converts workflow histories to and from the proto JSON that the `temporal` CLI and the Web UI
// use, for the recorded replay fixtures.
import { createRequire } from 'node:module';
import proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root.js';

export type History = proto.temporal.api.history.v1.IHistory;

/** A protobufjs reflection type, opaque here: only protojson looks inside. */
type Type = object;

interface ProtoJson {
  toJson(type: Type, message: unknown): unknown;
  fromJson(type: Type, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
}

// The SDK's historyToJSON/historyFromJSON pair @temporalio/common's copy of protobufjs with the
// types @temporalio/proto built on its own copy; when npm installs the two copies side by side
// (as it does here, next to the protobufjs 7 that gRPC needs) protobufjs refuses the foreign
// type ("type must be a Type"). Resolving protojson from @temporalio/proto's own location uses
// the copy its types came from, whatever the install layout.
const protoRequire = createRequire(createRequire(import.meta.url).resolve('@temporalio/proto'));
const protojson = protoRequire('protobufjs/ext/protojson') as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): Type }).lookupType(
  'temporal.api.history.v1.History',
);

/**
 * A workflow history as proto JSON: the format `temporal workflow show --output json` writes and
 * the Web UI downloads, so a fixture can be read, diffed and replayed by any Temporal tool.
 */
export function historyToJson(history: History): string {
  const json = protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** Reads a history written by `historyToJson` (or the CLI) back into the SDK's History. */
export function historyFromJson(json: unknown): History {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { events?: unknown }).events)) {
    throw new TypeError('not a workflow history: expected a JSON object with an "events" array');
  }
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}
