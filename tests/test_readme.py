"""What the README promises: the example's accuracy, and commands that run as shown."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_training_example_prints_its_accuracy(tmp_path):
    first = re.search(r"```python\n(.*?)```", README.read_text(), flags=re.S).group(1)
    r = subprocess.run([sys.executable, "-c", first], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    accuracies = [float(line.split()[-1]) for line in r.stdout.splitlines()]
    assert len(accuracies) == 2 and min(accuracies) > 0.85, r.stdout


def test_readme_mpi_commands_name_the_virtualenvs_mpiexec():
    # After `make demo` only the virtualenv has mpiexec; a bare `mpiexec` is not on PATH.
    commands = [line for line in README.read_text().splitlines() if "mpiexec -n" in line]
    assert commands
    for line in commands:
        assert line.startswith(".venv/bin/mpiexec -n "), line
        program = line.split()[3]
        assert program.startswith(".venv/bin/"), line
    assert (Path(sys.executable).parent / "mpiexec").exists() or \
        not (ROOT / ".venv").exists(), "the mpi extra puts mpiexec into the virtualenv"
