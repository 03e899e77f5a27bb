# bash completion for bpfsbx(1): subcommands, their options, pending
# request ids (approve, deny) and policy files (policy, run --policy).
# Installed as $(PREFIX)/share/bash-completion/completions/bpfsbx.

# the ids in DIR/.sandbox/escalations/pending (DIR: --dir, else the
# nearest project at or above the current directory)
_bpfsbx_pending_ids()
{
	local dir=$1 d
	if [[ -z $dir ]]; then
		d=$PWD
		while [[ -n $d && ! -d $d/.sandbox ]]; do d=${d%/*}; done
		dir=${d:-.}
	fi
	local f
	for f in "$dir"/.sandbox/escalations/pending/*.json; do
		[[ -e $f ]] || continue
		f=${f##*/}
		printf '%s\n' "${f%.json}"
	done
}

_bpfsbx()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi

	local cmds="approve audit daemon deny doctor help hook init mcp policy reload run status uninstall unload version watch"
	if [[ $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	local cmd=${words[1]} opts=""
	case $cmd in
	approve) opts="--scope --dir --note --cmd-timeout --help" ;;
	deny) opts="--dir --note --help" ;;
	audit) opts="verify tail -f --follow -n --lines --json --help" ;;
	daemon) opts="--log --once-ttl --metrics-dir --no-journal --help" ;;
	doctor | status | unload) opts="--help"
		[[ $cmd == status ]] && opts="--json --help"
		[[ $cmd == unload ]] && opts="--force --help" ;;
	hook) opts="pre-tool-use post-tool-use session-start --help" ;;
	init) opts="--claude --mcp --codex --cursor --policy --help" ;;
	mcp) opts="--project --help" ;;
	policy) opts="check explain compile --dump --project --home --no-resolve --policy-id --paths-from --help" ;;
	reload) opts="--policy --project --help" ;;
	run) opts="--policy --project --as-root --help --" ;;
	uninstall) opts="--help" ;;
	watch) opts="--auto --scope --once --cmd-timeout --lines --help" ;;
	help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return ;;
	esac

	case $prev in
	--scope) COMPREPLY=($(compgen -W "once session always" -- "$cur")); return ;;
	--auto) COMPREPLY=($(compgen -W "approve deny" -- "$cur")); return ;;
	--policy) COMPREPLY=($(compgen -f -X '!*.@(yaml|yml)' -- "$cur") $(compgen -d -- "$cur")); return ;;
	--dir | --project | --home | --metrics-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--log) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--note | --cmd-timeout | --once-ttl | -n | --lines | --policy-id) return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $cmd in
	approve | deny)
		local dir="" i
		for ((i = 2; i < cword; i++)); do
			[[ ${words[i]} == --dir ]] && dir=${words[i+1]}
		done
		COMPREPLY=($(compgen -W "$(_bpfsbx_pending_ids "$dir")" -- "$cur")) ;;
	policy)
		if [[ $cword -eq 2 ]]; then
			COMPREPLY=($(compgen -W "check explain compile" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.@(yaml|yml)' -- "$cur") $(compgen -d -- "$cur"))
		fi ;;
	audit)
		if [[ $cword -eq 2 ]]; then
			COMPREPLY=($(compgen -W "verify tail" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi ;;
	hook) COMPREPLY=($(compgen -W "pre-tool-use post-tool-use session-start" -- "$cur")) ;;
	init | uninstall | watch) COMPREPLY=($(compgen -d -- "$cur")) ;;
	run) COMPREPLY=($(compgen -c -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	esac
}
complete -F _bpfsbx bpfsbx
