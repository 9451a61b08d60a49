#!/usr/bin/env python3
"""A TCP proxy a test can cut: listens on 127.0.0.1 (its port written to PORT_FILE) and forwards
every connection to TARGET_HOST:TARGET_PORT. SIGUSR1 cuts it as a network partition does: no
byte is forwarded any more in either direction and new connections are never answered (the
listener is closed), while the connections already made stay open (their peers learn nothing).
SIGTERM ends it. Usage: tcp_cut_proxy.py TARGET_HOST TARGET_PORT PORT_FILE"""
import asyncio
import signal
import sys

cut = asyncio.Event()


async def pipe(reader, writer):
    try:
        while not cut.is_set():
            data = await reader.read(65536)
            if not data or cut.is_set():
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    if not cut.is_set():
        writer.close()


async def main():
    host, port, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]

    async def handle(cr, cw):
        try:
            sr, sw = await asyncio.open_connection(host, port)
        except OSError:
            cw.close()
            return
        await asyncio.gather(pipe(cr, sw), pipe(sr, cw))

    server = await asyncio.start_server(handle, '127.0.0.1', 0)
    with open(port_file + '.tmp', 'w') as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    import os
    os.replace(port_file + '.tmp', port_file)
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, lambda: (cut.set(), server.close()))
    loop.add_signal_handler(signal.SIGTERM, done.set)
    await done.wait()


asyncio.run(main())
