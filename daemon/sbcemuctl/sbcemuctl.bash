# bash completion for sbcemuctl: its commands and subcommands, read from
# `sbcemuctl --help` (one truth: the help's command lines), and its options.
_sbcemuctl()
{
	local cur prev words cword
	_init_completion || return

	case $prev in
	-s | --socket)
		_filedir
		return
		;;
	--state-dir)
		_filedir -d
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '--socket --state-dir --json --help --version' -- "$cur"))
		return
	fi
	# The command's words: those after the global options.
	local i first=0 args=()
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-s | --socket | --state-dir) ((i++)) ;;
		-*) ;;
		*) args+=("${words[i]}") ;;
		esac
	done
	local help
	help=$("${words[0]}" --help 2>/dev/null) || return
	if ((${#args[@]} == 0)); then
		# "  status | show | lus [--target IQN]", "  lu show LUN ...": first words, '|' alternatives.
		COMPREPLY=($(compgen -W "$(awk '/^  [a-z]/ {
			n = split($0, alt, / \| /);
			for (k = 1; k <= n; k++) { split(alt[k], w, " "); if (w[1] ~ /^[a-z-]+$/) print w[1] }
		}' <<<"$help" | sort -u)" -- "$cur"))
	elif ((${#args[@]} == 1)); then
		COMPREPLY=($(compgen -W "$(awk -v g="${args[0]}" '$1 == g && /^  [a-z]/ {
			n = split($2, alt, "|"); for (k = 1; k <= n; k++) if (alt[k] ~ /^[a-z-]+$/) print alt[k]
		}' <<<"$help" | sort -u)" -- "$cur"))
	fi
} &&
	complete -F _sbcemuctl sbcemuctl
