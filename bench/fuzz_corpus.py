# The fixed corpus of docs/performance.md for fuzz_einsum_diff: 3000 generated-mode inputs drawn from
# random.Random(1), plus the checked-in seeds. Usage: python3 bench/fuzz_corpus.py OUT_DIR SEEDS_DIR
import random, os, shutil, sys
out = sys.argv[1]; seeds = sys.argv[2]
rng = random.Random(1)
for i in range(3000):
    length = rng.randrange(0, 256)
    body = bytes(rng.randrange(256) for _ in range(length))
    data = bytes([rng.randrange(256), rng.randrange(256) | 1, length & 255, length >> 8]) + body + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
    open(os.path.join(out, f'gen{i:04d}'), 'wb').write(data)
for f in os.listdir(seeds): shutil.copy(os.path.join(seeds, f), os.path.join(out, 'seed-' + f))
