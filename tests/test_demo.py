"""The demo runs from the command line and prints the worked examples' numbers."""

import subprocess
import sys


def test_demo_prints_worked_examples():
    out = subprocess.run([sys.executable, "-m", "dualad", "demo"], capture_output=True, text=True,
                         check=True).stdout
    assert "v5   v4 − v3       11.652071          5.500000          1.716338" in out
    assert "[-0.25  1.  ]" in out
    assert "f'(2)  = 4.5" in out and "f''(2) = 1.75" in out
    assert out.count("1.309081600000") == 2
    assert "d loss/dx = 4.0" in out
    assert "(f, f') = (8.0, 12.0)" in out


def test_demo_prints_the_adjoint_trace_and_mode_choices():
    out = subprocess.run([sys.executable, "-m", "dualad", "demo"], capture_output=True, text=True,
                         check=True).stdout
    assert "v3   sin v0        -0.958924            -1.000000" in out
    assert "v0   x2             5.000000             1.716338" in out
    assert "v-1  x1             2.000000             5.500000" in out
    assert "wide Jacobian: N=1000 inputs, M=10 outputs: reverse needs 10 sweeps" in out
    assert "tall Jacobian: N=10 inputs, M=1000 outputs: forward needs 1 forward pass" in out
