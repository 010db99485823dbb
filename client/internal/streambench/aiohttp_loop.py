"""The Python peer of streambench: N streams read with aiohttp, shaped like
vLLM's benchmarks/backend_request_func.py (async_request_openai_chat_completions):
one aiohttp session, `async for chunk_bytes in response.content`, strip
`data: `, json.loads, time.perf_counter() per chunk. Requests run back to back
on each stream. It reports, as one JSON line, the chunks read and its own CPU
time (getrusage) over the measured window.

usage: aiohttp_loop.py URL STREAMS MAX_TOKENS WARMUP_S WINDOW_S MODEL RATE
"""
import asyncio
import json
import resource
import sys
import time

import aiohttp

URL, STREAMS, MAX_TOKENS, WARMUP, WINDOW, MODEL, RATE = (
    sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6],
    float(sys.argv[7]))

chunks = 0   # content chunks read
bunched = 0  # of which read within a quarter pass of the previous one: late
failed = 0
done = 0
BUNCH_GAP = 0.25 / RATE


async def request(session, payload):
    global chunks, bunched, failed, done
    generated_text = ""
    last_content = 0.0
    ttft = 0.0
    itl = []
    st = time.perf_counter()
    most_recent_timestamp = st
    async with session.post(url=URL, json=payload, headers={"Content-Type": "application/json"}) as response:
        if response.status != 200:
            failed += 1
            await response.read()
            return
        async for chunk_bytes in response.content:
            chunk_bytes = chunk_bytes.strip()
            if not chunk_bytes:
                continue
            chunk = chunk_bytes.decode("utf-8").removeprefix("data: ")
            if chunk != "[DONE]":
                timestamp = time.perf_counter()
                data = json.loads(chunk)
                if choices := data.get("choices"):
                    content = choices[0]["delta"].get("content")
                    if ttft == 0.0:
                        ttft = timestamp - st
                    else:
                        itl.append(timestamp - most_recent_timestamp)
                    generated_text += content or ""
                    if content:
                        chunks += 1
                        if last_content and timestamp - last_content < BUNCH_GAP:
                            bunched += 1
                        last_content = timestamp
                most_recent_timestamp = timestamp
        done += 1


async def stream(session, stop):
    global failed
    payload = {"model": MODEL, "messages": [{"role": "user", "content": "tell me a story"}],
               "max_tokens": MAX_TOKENS, "ignore_eos": True, "stream": True,
               "stream_options": {"include_usage": True}}
    while not stop.is_set():
        try:
            await request(session, payload)
        except asyncio.CancelledError:
            raise
        except Exception:
            failed += 1
            await asyncio.sleep(0.1)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def main():
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(stream(session, stop)) for _ in range(STREAMS)]
        await asyncio.sleep(WARMUP)
        c0, n0, b0, t0 = cpu(), chunks, bunched, time.perf_counter()
        await asyncio.sleep(WINDOW)
        c1, n1, b1, t1 = cpu(), chunks, bunched, time.perf_counter()
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"loop": "aiohttp", "chunks": n1 - n0, "bunched": b1 - b0, "cpu_ns": int((c1 - c0) * 1e9),
                      "wall_ns": int((t1 - t0) * 1e9), "failed": failed, "requests": done}))


asyncio.run(main())
