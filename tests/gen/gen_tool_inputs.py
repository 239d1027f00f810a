"""Makes the .npz files the axle-run tests read (tests/run.sh, "axle-run's
inputs and outputs"), with NumPy, from the demo's inputs and golden:

  tests/tools/reduce_sum_in.npz        np.savez of demo_reduce_sum's in0..in2
  tests/tools/reduce_sum_want.npz      np.savez of its golden out0 (NumPy's sum)
  tests/tools/reduce_sum_in_named.npz  the same inputs saved by keyword (x, y, z)
  tests/tools/reduce_sum_in_zip.npz    np.savez_compressed: axle refuses it

Run from the repository root: python3 tests/gen/gen_tool_inputs.py"""
import numpy as np

demo = "tests/hlo/demo_reduce_sum"
x, y, z = (np.load(f"{demo}/in{i}.npy") for i in range(3))
np.savez("tests/tools/reduce_sum_in.npz", x, y, z)
np.savez("tests/tools/reduce_sum_want.npz", np.load(f"{demo}/out0.npy"))
np.savez("tests/tools/reduce_sum_in_named.npz", x=x, y=y, z=z)
np.savez_compressed("tests/tools/reduce_sum_in_zip.npz", x, y, z)
