/**
 * The assembly's local endpoints (the IAM-checked proxies, the Secrets Manager endpoint) listen on a
 * free loopback port and close once, open connections included.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackEndpoint {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: Server): Promise<LoopbackEndpoint> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
