"""Why is my persistent cache directory empty? Write an entry here, read it back in a second process.

Run: ``python examples/persistent_cache.py``
"""

import shutil
import subprocess
import sys
import tempfile

import jax
import jax.numpy as jnp

import jaxshow
from jaxshow import persistent

CHILD = """
import sys, jax, jax.numpy as jnp, jaxshow
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
@jax.jit
def work(x):
    return jnp.sin(x) @ x.T
with jaxshow.explain() as ex:
    work(jnp.ones((64, 64)))
for c in ex.report.persistent:
    print("second process:", c.module, c.verdict, "-", c.reason)
"""

directory = tempfile.mkdtemp(prefix="jax-cache-")
jax.config.update("jax_compilation_cache_dir", directory)
print(persistent.report())  # the gates, before anything is compiled


@jax.jit
def work(x):
    return jnp.sin(x) @ x.T


with jaxshow.explain() as ex:
    work(jnp.ones((64, 64)))  # compiles in well under 1 s: skipped by the default gate
for c in ex.report.persistent:
    print("default gate:", c.module, c.verdict, "-", c.reason)

jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
work.clear_cache()
with jaxshow.explain() as ex:
    work(jnp.ones((64, 64)))
for c in ex.report.persistent:
    print("gate lowered to 0 s:", c.module, c.verdict, "-", c.reason)

print(persistent.report(ex.report.persistent))
subprocess.run([sys.executable, "-c", CHILD, directory], check=True)
shutil.rmtree(directory)
