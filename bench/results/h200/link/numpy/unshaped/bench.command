/work/main/.gpu-carry/bin/outboard run -- python3 /work/main/bench/gpu/../link/numpy_calls.py
