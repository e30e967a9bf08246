"""Run llama.cpp's own HTTP server (from the ``xllamacpp`` wheel) on 127.0.0.1.

usage: python serve.py MODEL.gguf PORT CONTEXT_TOKENS

Run as a child process so a test session can stop it with SIGTERM. Prints
``LISTENING <port>`` once ``/health`` answers, then serves until terminated.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
import urllib.error
import urllib.request

import xllamacpp


def _serve(model: str, port: int, context_tokens: int) -> object:
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = context_tokens
    params.n_parallel = 1
    params.use_jinja = True  # the model's own chat template, which carries tool calls
    params.offline = True
    params.warmup = False
    params.model_alias = {"tiny"}
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.n_threads_http = 2
    return xllamacpp.Server(params)


def _wait_healthy(port: int) -> None:
    for _ in range(400):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    raise SystemExit(f"llama.cpp server on port {port} never became healthy")


def main() -> None:
    model, port, context_tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    server = _serve(model, port, context_tokens)
    _wait_healthy(port)
    print(f"LISTENING {port}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    stopped.wait()
    del server  # shut llama.cpp down before the interpreter tears down


if __name__ == "__main__":
    main()
