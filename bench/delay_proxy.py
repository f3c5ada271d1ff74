#!/usr/bin/env python3
"""A TCP forwarder on 127.0.0.1 that adds a fixed delay each way: a long-haul link for job (i).

Every chunk read from one side is written to the other DELAY_MS later, in order, so each
round trip through it costs twice the delay (TLS and HTTP/2 pass through untouched: the client
talks to the server behind it). Bandwidth is not limited; only latency is added.
Usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS   (prints "ready" once it listens)
"""
import asyncio, sys

listen_port, target_port, delay = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1000


async def pump(reader, writer):
    loop = asyncio.get_running_loop()
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                break
            # Chunks read later fire later: order is kept.
            loop.call_later(delay, writer.write, data)
    except (ConnectionError, OSError):
        pass
    await asyncio.sleep(delay)
    try:
        writer.write_eof()
    except (ConnectionError, OSError, RuntimeError):
        writer.close()


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pump(client_reader, server_writer), pump(server_reader, client_writer))
    server_writer.close()
    client_writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
