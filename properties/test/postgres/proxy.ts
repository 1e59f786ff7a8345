/**
 * A TCP proxy between a queue's pool and the machine's PostgreSQL, which a test cuts and reopens to make the
 * database go away and come back (docs/spec.md §20.8) without touching the server, which other jobs share.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/** The proxy: where it listens, and the outage it makes. */
export interface TcpProxy {
  /** The port on 127.0.0.1 it listens on, the same after `reopen`. */
  readonly port: number;
  /** The database goes away: every connection through the proxy is destroyed, and new ones are refused. */
  cut(): Promise<void>;
  /** The database is back: the proxy listens again on the same port. */
  reopen(): Promise<void>;
  /**
   * The database stops answering, as behind a network partition that sends no reset: every connection stays open,
   * and what either end sends is held, not forwarded; new connections are accepted and held too.
   */
  stall(): void;
  /** The database answers again: what was held is forwarded, and so is what follows. */
  resume(): void;
}

/** Listens on `port` of the loopback (0: any free port). */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Starts a proxy to `target` (the database's host and port), open. Each connection to it is piped to a connection
 * of its own to the target; when either end closes, so does the other.
 */
export async function startProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** Each open connection's two directions: what `from` reads is written to `to`, unless stalled. */
  const links = new Set<readonly [Socket, Socket]>();
  let stalled = false;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const link of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      const [socket, other] = link;
      sockets.add(socket);
      links.add(link);
      socket.on("error", () => socket.destroy()); // a reset end is closed like a cut one
      socket.on("close", () => {
        sockets.delete(socket);
        links.delete(link);
        other.destroy();
      });
      if (!stalled) socket.pipe(other);
    }
  });
  await listen(server, 0);
  const { port } = server.address() as AddressInfo;
  let open = true;
  return {
    port,
    async cut() {
      if (!open) return;
      open = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async reopen() {
      if (open) return;
      await listen(server, port);
      open = true;
    },
    stall() {
      stalled = true;
      for (const [from, to] of links) {
        from.unpipe(to);
        from.pause(); // it keeps what arrives until resume pipes it again
      }
    },
    resume() {
      if (!stalled) return;
      stalled = false;
      for (const [from, to] of links) from.pipe(to);
    },
  };
}
