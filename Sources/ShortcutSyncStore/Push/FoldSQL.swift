import Foundation

/// The fold statements' texts (for the live tables), apart from their generic statements.
enum FoldSQL {
    /// A statement of `WITH` arms, each written whole (`name`, its statement), then `final`.
    static func statement(_ arms: [(name: String, sql: String)], then final: String) -> String {
        let written = arms.map { arm in
            arm.name + " AS (\n" + arm.sql.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n") + "\n)"
        }
        return "WITH " + written.joined(separator: ", ") + "\n" + final
    }

    /// `arms`, named, after the arms that come before them.
    static func arms(_ arms: [FoldArm]) -> [(name: String, sql: String)] {
        arms.map { ($0.rawValue, $0.sql) }
    }
}
