#!/usr/bin/python3
"""Every code block of docs/library.md, compiled and run against an installed tessera, as a
reader would use it (tests/examples/run.sh calls it after the install):

  doc_snippets.py DOC PREFIX WORK MPIRUN PYTHON|none PYTHON_INSTALL_DIR

- cmake: the `find_package`/`target_link_libraries` lines, in a project that enables C++ only
  (project(app LANGUAGES CXX)), build every C++ program of the page;
- sh: the pkg-config command lines, run as written (app.cpp, app.c: the page's programs), the
  programs started without LD_LIBRARY_PATH; the static one must not need libtessera.so;
- cpp fragments (no main) compile inside a main; c, fortran and python programs build and run
  (Fortran with the command the page gives, Python with the module the install holds).
Blocks of other kinds (the install commands, device arrays without a GPU) are listed as
skipped, with the reason."""
import os
import re
import shutil
import subprocess
import sys

doc, prefix, work, mpirun, python, pydir = sys.argv[1:7]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
env.pop("LD_LIBRARY_PATH", None)
failed = []


def sh(cmd, cwd=work, **kw):
    print("+ " + cmd, flush=True)
    p = subprocess.run(cmd, shell=True, cwd=cwd, env=kw.get("env", env), text=True,
                       capture_output=True, timeout=240)
    sys.stdout.write(p.stdout[-3000:] + p.stderr[-3000:])
    if p.returncode != 0:
        failed.append(cmd)
    return p


def run_mpi(exe, *args):
    return sh(" ".join([mpirun, "-np", "2", "--oversubscribe", exe, *args]))


text = open(doc).read()
blocks = re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)
by = {}
for lang, body in blocks:
    by.setdefault(lang, []).append(body)
print(f"{len(blocks)} blocks: " + ", ".join(f"{k} {len(v)}" for k, v in by.items()))

programs = {"cpp": [b for b in by.get("cpp", []) if "int main" in b],
            "c": [b for b in by.get("c", []) if "int main" in b]}
for lang in ("cpp", "c"):
    if not programs[lang]:
        failed.append(f"no {lang} program on the page")
with open(os.path.join(work, "app.cpp"), "w") as fh:
    fh.write(programs["cpp"][0])
with open(os.path.join(work, "app.c"), "w") as fh:
    fh.write(programs["c"][0])

# C++ fragments: inside a main.
for k, body in enumerate(b for b in by.get("cpp", []) if "int main" not in b):
    src = os.path.join(work, f"fragment{k}.cpp")
    with open(src, "w") as fh:
        fh.write("#include <tessera/tessera.hpp>\n#include <string_view>\nint main() {\n" +
                 body.replace("…", "") + "\n}\n")
    sh(f"mpicxx -std=c++20 -c {src} -o {src}.o $(pkg-config --cflags tessera)")

# CMake, from a C++-only project: the page's lines, the C++ program.
cmake_lines = [ln for b in by.get("cmake", []) for ln in b.splitlines()
               if "find_package" in ln or "tessera::tessera)" in ln]
proj = os.path.join(work, "cmake_app")
os.makedirs(proj, exist_ok=True)
shutil.copy(os.path.join(work, "app.cpp"), os.path.join(proj, "app.cpp"))
with open(os.path.join(proj, "CMakeLists.txt"), "w") as fh:
    fh.write("cmake_minimum_required(VERSION 3.20)\nproject(app LANGUAGES CXX)\n"
             "add_executable(app app.cpp)\n" + "\n".join(cmake_lines) + "\n")
if sh(f"cmake -S {proj} -B {proj}/build -DCMAKE_PREFIX_PATH={prefix} "
      "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF").returncode == 0 and \
        sh(f"cmake --build {proj}/build").returncode == 0:
    run_mpi(f"{proj}/build/app")

# The pkg-config command lines, as written: the programs start without LD_LIBRARY_PATH.
for b in by.get("sh", []):
    cmds = [c.strip() for c in b.replace("\\\n", " ").splitlines() if "pkg-config" in c]
    for c in cmds:
        c = re.sub(r"\s+#.*$", "", c).replace("$HOME/opt/tessera", prefix)
        out = "static_app" if "--static" in c else ("cpp_app" if "app.cpp" in c else "c_app")
        if sh(c + f" -o {out}").returncode == 0:
            if out == "static_app":
                needed = sh(f"readelf -d {out}").stdout
                if "libtessera.so" in needed:
                    failed.append("the static link needs libtessera.so")
            run_mpi(f"./{out}")

# The C programs after the first (which the pkg-config lines above build as app.c), each built
# and run as the first one.
for k, body in enumerate(programs["c"][1:]):
    src = os.path.join(work, f"app{k + 1}.c")
    with open(src, "w") as fh:
        fh.write(body)
    if sh(f"mpicc {src} -o c_app{k + 1} $(pkg-config --cflags --libs tessera) "
          f"-Wl,-rpath,{prefix}/lib").returncode == 0:
        run_mpi(f"./c_app{k + 1}")

# Fortran: every program, with the command the page gives (which names app.f90).
fortran = [b for b in by.get("fortran", []) if "program" in b]
m = re.search(r"`(mpifort [^`]*)`", text.replace("\n", " "))
if fortran and m and os.path.isdir(os.path.join(prefix, "include", "tessera", "fortran")):
    cmd = m.group(1).replace("PREFIX", prefix)
    for k, body in enumerate(fortran):
        with open(os.path.join(work, "app.f90"), "w") as fh:
            fh.write(body)
        if sh(cmd + f" -o f_app{k}").returncode == 0:
            run_mpi(f"./f_app{k}")
else:
    print("skipped: the Fortran programs (no module installed, or no command on the page)")

# Python: the programs (the device-array one needs CuPy and a GPU).
for k, body in enumerate(by.get("python", [])):
    if "cupy" in body:
        print("skipped: the device-array Python block (needs CuPy and a GPU)")
        continue
    if python == "none":
        print("skipped: Python (the module was not built)")
        break
    src = os.path.join(work, f"snippet{k}.py")
    with open(src, "w") as fh:
        fh.write(body)
    pyenv = dict(env, PYTHONPATH=os.path.join(prefix, pydir))
    sh(" ".join([mpirun, "-np", "2", "--oversubscribe", python, src]), env=pyenv)

print("skipped: the install commands (this test installs the build itself)")
if failed:
    print("FAILED:\n  " + "\n  ".join(failed), file=sys.stderr)
    sys.exit(1)
print("every snippet of the page builds and runs")
