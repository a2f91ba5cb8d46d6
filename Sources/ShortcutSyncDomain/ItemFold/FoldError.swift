import Foundation

/// Why a batch could not be folded.
public enum FoldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The log's count of covered donations is missing or impossible for the stored row.
    case recountMissing(DonationGroupID, answer: Int?, count: Int)
    /// A learning event landed among the group's donations and the log's donations for it are missing.
    case resumMissing(DonationGroupID)

    public var description: String {
        switch self {
        case .recountMissing(let id, let answer, let count):
            "the donations of \(id) covered by this batch were counted as \(answer.map(String.init) ?? "nothing") of \(count) stored: the fold rows and the log disagree"
        case .resumMissing(let id):
            "the suggestion sums of \(id) must be counted again from the log, and its donations were not read"
        }
    }
}
