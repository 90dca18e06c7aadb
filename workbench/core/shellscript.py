"""The bash a `persistShell` execution runs before its command, on the script's first line: it
defines what saves the shell's state at its exit, and installs that as the EXIT trap.

- `__workbench_save` writes `$PWD` and each exported variable, NUL-terminated, then an empty
  entry that says the state is whole. Builtins only (`printf`, expansions): no program is started,
  whose start a big environment could make fail, nor a process forked; whatever options the
  command left set (`-e`, `-u`, `-x`, `-a`, `-f`) are off while it runs, and `$PWD` is set anew
  if the command unset it. Only the command's own shell saves, never a subshell of it.
- The EXIT trap (`_ACTION`) saves, then runs the command's own EXIT trap if it set one (with the
  exit status in `$?`, as bash runs it), then exits with that status (or the one the command's
  trap exits with).
- `trap`, a function over the builtin, keeps the daemon's EXIT trap in place while the command
  sets, resets or prints its own as it would without it: the builtin runs with the command's EXIT
  trap in place, which is then read back (`trap -p EXIT`) and kept aside. In a subshell, traps are
  the subshell's own, but until it sets one, `trap -p` prints those of the command's shell: there,
  the command's EXIT trap is printed instead of the daemon's.

Not covered: `builtin trap ... EXIT` or `command trap ... EXIT`, and a shell in POSIX mode (where
the builtin comes before a function of that name), replace the daemon's trap; `exec` replaces the
shell itself. The state is then not written, and not kept.
"""

from __future__ import annotations

import string


def _ansi_c(text: str) -> str:
    """`text` quoted as bash's `$'...'`."""
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


#: `"${!A@}" ... "${!_@}"`: the names of all the shell's variables, by expansion alone.
_ALL_NAMES = " ".join(f'"${{!{c}@}}"' for c in string.ascii_letters + "_")

#: The daemon's EXIT trap (no single quote in it): save, then run the command's own EXIT trap
#: if it set one, with the exit status in `$?` (in an `if` condition, a non-zero status does not
#: stop a `set -e` shell), then exit with that status. Run where the trap runs, not in a function,
#: as bash runs the command's trap; tracing (`set -x`) shows the command's trap alone.
_ACTION = (
    'if { __workbench_exit; __workbench_return "$__workbench_status"; } 2>/dev/null; '
    'then eval "${__workbench_trap-}"; else eval "${__workbench_trap-}"; fi; '
    '{ builtin exit "$__workbench_status"; } 2>/dev/null'
)
#: How `trap -p` prints it.
_OURS = f"trap -- '{_ACTION}' EXIT"

_EXIT = (
    "__workbench_exit() { __workbench_status=$?; __workbench_save; }; "
    '__workbench_return() { return "$1"; }; '
    "__workbench_read() { __workbench_trap=$2; }"
)

_TRAP = (
    "trap() { { builtin local -; builtin set +x; } 2>/dev/null; "
    'if [[ $BASHPID != "$$" ]]; then __workbench_subtrap "$@"; return; fi; '
    "builtin local __workbench_rc=0 __workbench_line; "
    'if [[ -n ${__workbench_trap+set} ]]; then builtin trap -- "$__workbench_trap" EXIT; '
    "else builtin trap - EXIT; fi; "
    'if builtin trap "$@"; then :; else __workbench_rc=$?; fi; '
    "if __workbench_line=$(builtin trap -p EXIT); then "
    "if [[ -z $__workbench_line ]]; then builtin unset __workbench_trap __workbench_shown; "
    'else builtin eval "__workbench_read ${__workbench_line#trap }"; '
    "__workbench_shown=$__workbench_line$'\\n'; fi; fi; "
    f"if [[ ${{__workbench_trap-}} == '{_ACTION}' ]]; then "
    "builtin unset __workbench_trap __workbench_shown; fi; "
    f"builtin trap -- '{_ACTION}' EXIT; return \"$__workbench_rc\"; }}"
)

_SUBTRAP = (
    "__workbench_subtrap() { { builtin local -; builtin set +x; } 2>/dev/null; "
    "if [[ $# != 0 && $1 != -[lp] ]]; then __workbench_own=$BASHPID; fi; "
    'if [[ ${__workbench_own-} == "$BASHPID" ]]; then builtin trap "$@"; return; fi; '
    "builtin local __workbench_out; "
    '__workbench_out=$(builtin trap "$@") || return; '
    "[[ -z $__workbench_out ]] || __workbench_out+=$'\\n'; "
    f'__workbench_out=${{__workbench_out/{_ansi_c(_OURS + chr(10))}/"${{__workbench_shown-}}"}}; '
    "builtin printf '%s' \"$__workbench_out\"; }"
)


def prelude(target: str) -> str:
    """The first line of the script: `target` is where the state goes, quoted for the shell."""
    return f"{_save(target)}; {_EXIT}; {_TRAP}; {_SUBTRAP}; builtin trap -- '{_ACTION}' EXIT"


def _save(target: str) -> str:
    entry = 'builtin printf \'%s=%s\\0\' "$__workbench_n" "${!__workbench_n}" || return 1'
    return (
        "__workbench_save() { { builtin local -; builtin set +aefux; } 2>/dev/null; "
        '[[ $BASHPID == "$$" ]] || return 0; builtin local __workbench_n __workbench_a; '
        "[[ $PWD == /* ]] || builtin cd . 2>/dev/null; "
        "{ builtin printf '%s\\0' \"$PWD\" || return 1; "
        f"for __workbench_n in {_ALL_NAMES}; do __workbench_a=${{!__workbench_n@a}}; "
        "[[ $__workbench_a == *x* && $__workbench_a != *[aA]* && -v $__workbench_n ]] || continue; "
        f"{entry}; done; builtin printf '\\0'; }} > {target} 2>/dev/null; }}"
    )
