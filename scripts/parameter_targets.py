#!/usr/bin/env python3
"""Random targets for `pathtrack solve FAMILY --params-file`: a CSV with the family's
parameter names as header and ROWS rows, each value a complex number whose real and
imaginary parts are standard normal (Python's random.gauss, seeded), six decimals.

Usage: scripts/parameter_targets.py FAMILY.yaml ROWS [SEED] > targets.csv
"""
import random
import re
import sys

family, rows = sys.argv[1], int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
match = re.search(r"^parameters:\s*\[(.*)\]", open(family).read(), re.M)
if not match:
    sys.exit(f"{family}: no one-line `parameters: [...]` list")
names = [n.strip() for n in match.group(1).split(",")]
random.seed(seed)
print(",".join(names))
for _ in range(rows):
    print(",".join(f"{random.gauss(0, 1):.6f}{random.gauss(0, 1):+.6f}i" for _ in names))
