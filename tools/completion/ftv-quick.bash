# SPDX-License-Identifier: GPL-2.0
# bash completion for ftv-quick(8)

_ftv_quick()
{
	# shellcheck disable=SC2034 # prev is set by _init_completion, unused
	local cur prev words cword
	_init_completion || return

	if ((cword == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "up down save strip --help" -- "$cur")
		return
	fi
	((cword == 2)) || return
	case ${words[1]} in
	up | strip)
		# The names of /etc/ftv's files, or a path.
		local conf names=()
		for conf in /etc/ftv/*.conf; do
			[[ -e $conf ]] || continue
			conf=${conf##*/}
			names+=("${conf%.conf}")
		done
		mapfile -t COMPREPLY < <(compgen -W "${names[*]}" -- "$cur")
		_filedir conf
		;;
	down | save)
		mapfile -t COMPREPLY < <(compgen -W "$(ip -o link show type ftv 2>/dev/null |
			awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')" -- "$cur")
		;;
	esac
}

complete -F _ftv_quick ftv-quick
