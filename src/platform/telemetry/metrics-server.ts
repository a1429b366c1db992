// A separate HTTP listener serving a prom-client registry at /metrics, for the API, the outbox
// dispatcher and the receipts consumer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A listener of its own for a prom-client registry: GET /metrics answers the registry's
 * exposition (prom-client writes it), anything else 404. Used by the API (API_METRICS_PORT, never
 * the public port), the outbox dispatcher and the receipts consumer (METRICS_PORT). Port 0 picks
 * a free one (tests).
 */
export async function startMetricsServer(registry: Registry, options: { port: number; host?: string }): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType }).end(text);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`could not collect metrics: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
        server.closeAllConnections();
      }),
  };
}
