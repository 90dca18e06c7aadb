// A TCP proxy in front of a daemon, for the tests of what lies between a client and its daemon:
// connections that drop, and a gateway that answers for a daemon it cannot reach.

import { createServer, connect } from "node:net";

const GATEWAY_DOWN =
  "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 40\r\nConnection: close\r\n\r\n" +
  "<html><h1>502 Bad Gateway</h1></html>\r\n\r\n";

export class Proxy {
  /** Forwards 127.0.0.1:<port> to `target` (`http://127.0.0.1:N`). */
  constructor(target) {
    const { hostname, port } = new URL(target);
    this.target = { host: hostname, port: Number(port) };
    /** `forward`, or `gateway`: answer every request 502 with an HTML page, as a proxy does. */
    this.mode = "forward";
    /** The request lines seen (`GET /v1/... HTTP/1.1`), in order. */
    this.requests = [];
    /** The request line part of the next request to cut after (`cutAfter`), or null. */
    this.cut = null;
    this.sockets = new Set();
    this.server = createServer((client) => this.accept(client));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  /** How many requests went to a path containing `part`. */
  count(part) {
    return this.requests.filter((line) => line.includes(part)).length;
  }

  accept(client) {
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => undefined);
    if (this.mode === "gateway") {
      client.once("data", () => client.end(GATEWAY_DOWN));
      return;
    }
    const upstream = connect(this.target);
    this.sockets.add(upstream);
    upstream.on("close", () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    let swallow = false;
    client.on("data", (chunk) => {
      const text = chunk.toString("latin1");
      for (const match of text.matchAll(/(?:^|\r\n)((?:GET|POST|PUT|DELETE) \S+ HTTP\/1\.1)\r\n/g)) {
        this.requests.push(match[1]);
        if (this.cut !== null && match[1].includes(this.cut)) {
          this.cut = null;
          swallow = true;
          setTimeout(() => {
            client.destroy();
            upstream.destroy();
          }, 300);
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (!swallow) client.write(chunk);
    });
  }

  /**
   * Forward the next request whose line contains `part` whole, hold back its answer, and cut its
   * connection a moment later: the daemon took the request; the client never hears so.
   */
  cutAfter(part) {
    this.cut = part;
  }

  /** Cut every open connection, both ways (new ones are still taken). */
  drop() {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  async close() {
    this.drop();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The proxies a test file opened, closed together after it. */
export class Proxies {
  constructor() {
    this.opened = [];
  }

  /** A started proxy in front of `target`. */
  async to(target) {
    const made = await new Proxy(target).start();
    this.opened.push(made);
    return made;
  }

  async close() {
    for (const proxy of this.opened) await proxy.close();
    this.opened = [];
  }
}
