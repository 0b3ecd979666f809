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

_ftvctl()
{
	local cur prev words cword
	_init_completion || return

	local commands="show showconf set setconf syncconf peer monitor probe genkey genpsk pubkey help"
	local peer_options="endpoint allowed-ips preshared-key persistent-keepalive fec flows rotate"

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
			mapfile -t COMPREPLY < <(compgen -W "private-key listen-port fwmark shape" -- "$cur")
		elif [[ $prev == private-key ]]; then
			_filedir
		elif [[ $prev == shape ]]; then
			mapfile -t COMPREPLY < <(compgen -W "on off" -- "$cur")
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
				mapfile -t COMPREPLY < <(compgen -W "$peer_options" -- "$cur")
			elif [[ $prev == preshared-key ]]; then
				_filedir
			elif [[ $prev == persistent-keepalive ]]; then
				mapfile -t COMPREPLY < <(compgen -W "off 25" -- "$cur")
			elif [[ $prev == fec ]]; then
				# K:M is any ratio; these are examples of it.
				mapfile -t COMPREPLY < <(compgen -W "off auto 16:2 8:2" -- "$cur")
			elif [[ $prev == flows ]]; then
				mapfile -t COMPREPLY < <(compgen -W "1 2 3 4 5 6 7 8" -- "$cur")
			elif [[ $prev == rotate ]]; then
				# A byte budget is any size; these are examples of it.
				mapfile -t COMPREPLY < <(compgen -W "off auto 12k 1m" -- "$cur")
			fi
		fi
		;;
	esac
}

complete -F _ftvctl ftvctl
