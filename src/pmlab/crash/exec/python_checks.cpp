#include "pmlab/crash/exec/python_checks.hpp"

namespace pmlab::crash::exec {

// One string, the Python program below kept whole so it reads as one: longer than 80 lines for that.
std::string_view python_check_server_source() {
  return R"PY(
# pmlab crash exec --check-python: the check script judges each crash image in a fork of this interpreter,
# which read, compiled and imported what it needs once. Requests and answers as for --check-server.
import ast
import atexit
import json
import os
import shlex
import sys
import traceback

words = shlex.split(sys.argv[1])
script = words[0] if words else ""
try:
    with open(script, "rb") as f:
        source = f.read()
    code = compile(source, script, "exec")
except (OSError, SyntaxError, ValueError) as e:
    print(f"cannot read {script!r}: {e}", file=sys.stderr)
    sys.exit(127)
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
for node in ast.parse(source).body:  # what its top level imports, imported once here
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names = [node.module]
    else:
        continue
    for name in names:
        try:
            __import__(name)
        except BaseException:
            pass


def run_script(request, output):
    """In the fork: the script as `python3 SCRIPT ARGS` runs it; returns its exit status."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.environ.update(request)
    sys.argv = [w.replace("{}", request.get("PMLAB_CRASH_IMAGE", "")) for w in words]
    try:
        exec(code, {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__})
        status = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    try:  # what an interpreter does at its exit: the script's exit handlers, its output flushed
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    return status


for line in sys.stdin:
    request = json.loads(line)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os._exit(run_script(request, write_end) & 0xFF)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        print("ok", flush=True)
        continue
    said = [l for l in b"".join(chunks).decode(errors="replace").splitlines() if l.strip()]
    how = (f"exited with {os.WEXITSTATUS(status)}" if os.WIFEXITED(status)
           else f"killed by signal {os.WTERMSIG(status)}")
    print("\n".join(said[-6:-1] + [how]), file=sys.stderr, flush=True)  # shown with the failure
    print(said[-1] if said else how, flush=True)
)PY";
}

}  // namespace pmlab::crash::exec
