# parse_options "$@": each --NAME VALUE into OPT[NAME], the other arguments into POSITIONAL; -h or
# --help prints the calling script's header comment and exits 0. The caller declares OPT (an
# associative array) with every option's default, so an option not in it is refused, and defines
# usage_error (which exits 2).
parse_options() {
  POSITIONAL=()
  while [ $# -gt 0 ]; do
    case "$1" in
      -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
      --*)
        local key=${1#--}
        [ -n "${OPT[$key]+set}" ] || usage_error "unknown option '$1' (try --help)"
        [ $# -ge 2 ] || usage_error "$1 needs a value"
        OPT[$key]=$2
        shift ;;
      -*) usage_error "unknown option '$1' (try --help)" ;;
      *) POSITIONAL+=("$1") ;;
    esac
    shift
  done
}
