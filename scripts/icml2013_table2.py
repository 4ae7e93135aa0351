"""ICML 2013 Table 2, Figure 5 and the path/S3VM-light timing: the runner of :mod:`harness.icml2013`.

The same cells as ``s3vm-bench reproduce icml2013-table2``, with the paper's data set IDs::

    python scripts/icml2013_table2.py --out reports/icml2013/cells.jsonl [--datasets D1 D5] [--splits 10] [--jobs 2]
    python scripts/icml2013_table2.py --out reports/icml2013/cells.jsonl --report reports/icml2013-table2.md
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from s3vm_bench.harness.icml2013 import main  # noqa: E402

if __name__ == "__main__":
    main()
