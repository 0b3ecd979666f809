# SPDX-License-Identifier: GPL-2.0
# bash completion for ftvctl(8)

_ftvctl_interfaces()
{
	ip -o link show type ftv 2>/dev/null |
		awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'
}

# Public keys of the peers of interface $1, as `ftvctl show` prints them.
_ftvctl_peers()
{
	ftvctl show "$1" 2>/dev/null | awk '/^peer: / { print $2 }'
}

# The options of `ftvctl $1` (set or peer), or with $2 the values to offer
# for that option, as ftvctl's settings table declares them; "@file" means
# a file name.
_ftvctl_settings()
{
	local values
	values=$(ftvctl --complete "$@" 2>/dev/null) || return
	if [[ $values == @file ]]; then
		_filedir
	else
		mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
	fi
}

_ftvctl()
{
	local cur prev words cword
	_init_completion || return

	local commands="show showconf set setconf syncconf peer monitor probe genkey genpsk pubkey help"

	if ((cword == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
		return
	fi
	case ${words[1]} in
	show)
		if ((cword == 2)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces) all --json" -- "$cur")
		elif ((cword == 3)); then
			mapfile -t COMPREPLY < <(compgen -W "--json" -- "$cur")
		fi
		;;
	monitor)
		mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces) --json" -- "$cur")
		;;
	probe)
		if ((cword == 2)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces)" -- "$cur")
		elif ((cword == 3)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_peers "${words[2]}")" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "--json --quick --apply" -- "$cur")
		fi
		;;
	showconf)
		((cword == 2)) &&
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces)" -- "$cur")
		;;
	setconf | syncconf)
		if ((cword == 2)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces)" -- "$cur")
		elif ((cword == 3)); then
			_filedir
		fi
		;;
	set)
		if ((cword == 2)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces)" -- "$cur")
		elif ((cword % 2 == 1)); then
			_ftvctl_settings set
		else
			_ftvctl_settings set "$prev"
		fi
		;;
	peer)
		if ((cword == 2)); then
			mapfile -t COMPREPLY < <(compgen -W "add set del" -- "$cur")
		elif ((cword == 3)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_interfaces)" -- "$cur")
		elif ((cword == 4)); then
			[[ ${words[2]} == add ]] ||
				mapfile -t COMPREPLY < <(compgen -W "$(_ftvctl_peers "${words[3]}")" -- "$cur")
		elif [[ ${words[2]} != del ]]; then
			if ((cword % 2 == 1)); then
				_ftvctl_settings peer
			else
				_ftvctl_settings peer "$prev"
			fi
		fi
		;;
	esac
}

complete -F _ftvctl ftvctl
