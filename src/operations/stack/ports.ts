// Port checks for the local stack: a clear error naming the role of a port already taken, and a
// free port for tests and throwaway servers.
import net from 'node:net';

/** A port the stack needs is taken: says which, by what role, and how to choose another. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(
    readonly port: number,
    readonly role: string,
    readonly hint: string,
  ) {
    super(`port ${port} (${role}) is already in use on 127.0.0.1: stop what holds it, or ${hint}`);
  }
}

function tryListen(port: number, host: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      resolve(error);
    });
    server.listen({ port, host, exclusive: true }, () => {
      server.close(() => {
        resolve(null);
      });
    });
  });
}

/** Fails with PortInUseError when `port` cannot be bound on `host`. */
export async function assertPortFree(port: number, role: string, hint: string, host = '127.0.0.1'): Promise<void> {
  const error = await tryListen(port, host);
  if (error === null) return;
  if (error.code === 'EADDRINUSE' || error.code === 'EACCES') throw new PortInUseError(port, role, hint);
  throw error;
}

/** A port the kernel says is free right now (for tests and throwaway servers). */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        resolve(port);
      });
    });
  });
}
