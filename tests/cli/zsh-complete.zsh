# SPDX-License-Identifier: MIT
# Prints, one a line, the candidates zsh's completion system offers for a command line, as
# a user pressing TAB at its end would get them: an interactive zsh on a pseudo-terminal
# (zsh/zpty) with compinit and the completion folder first in fpath. compadd is wrapped to
# print what each call adds; a widget bound to ^T runs the completion and then a marker.
#
# usage: zsh -f zsh-complete.zsh COMPLETION_DIR 'warden run --ap'
zmodload zsh/zpty || exit 1
dir=$1
line=$2
zpty z zsh -f -i || exit 1
zpty -w z "stty -echo; PS1=''; RPROMPT=''; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
# The markers are written split in two so that nothing echoed before them can match.
zpty -w z 'compadd() { local -a _m; builtin compadd -O _m "$@"; print -rl -- "<<""M>>"${^_m}; builtin compadd "$@" }'
zpty -w z '_cap() { _main_complete; print -r -- "<<""END>>"; compstate[insert]=; compstate[list]=; }; zle -C cap complete-word _cap; bindkey "^T" cap'
zpty -w -n z "$line"$'\x14'
zpty -r z out '*<<END>>*' || exit 1
zpty -d z
print -r -- "$out" | tr -d '\r' | grep -ao '<<M>>.*' | sed 's/^<<M>>//; s/\x1b\[[0-9;?]*[A-Za-z]//g' | sort -u
