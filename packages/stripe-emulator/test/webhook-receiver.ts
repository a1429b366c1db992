/**
 * A real HTTP webhook endpoint for the conformance tests: it records every delivery (body,
 * signature, user agent, the parsed event) and answers what `status` says.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmulatedEvent } from '../src/index.js';

/** One webhook request as the receiver saw it. */
export interface Received {
  body: string;
  signature: string | undefined;
  userAgent: string | undefined;
  event: EmulatedEvent;
}

/** A real HTTP endpoint that records every delivery and answers what `status` says. */
export class Receiver {
  readonly received: Received[] = [];
  status: (event: EmulatedEvent, seen: number) => number = () => 200;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let receiver: Receiver | null = null;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const event = JSON.parse(body) as EmulatedEvent;
        const seen = receiver?.received.filter((entry) => entry.event.id === event.id).length ?? 0;
        receiver?.received.push({
          body,
          signature: request.headers['stripe-signature'] as string | undefined,
          userAgent: request.headers['user-agent'],
          event,
        });
        response.statusCode = receiver?.status(event, seen) ?? 200;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}/webhooks`);
    return receiver;
  }

  types(): string[] {
    return this.received.map((entry) => entry.event.type);
  }

  ofType(type: string): Received[] {
    return this.received.filter((entry) => entry.event.type === type);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
  }
}
