/// `--strict` (the write's findings set the status), `--strict=all` (any finding does), or neither.
public enum StrictScope: Equatable, Sendable {
    case off, write, all

    public static func of(_ strict: Bool, all: Bool) -> StrictScope { all ? .all : strict ? .write : .off }

    /// `--strict=all` is spelled `--strict-all` for the parser (a flag takes no value); `--strict=write`
    /// is `--strict`. Only `spend` and `buy` have it.
    public static func spelled(_ arguments: [String]) -> [String] {
        guard let first = arguments.first, ["spend", "buy"].contains(first) else { return arguments }
        return arguments.map { $0 == "--strict=all" ? "--strict-all" : $0 == "--strict=write" ? "--strict" : $0 }
    }
}
