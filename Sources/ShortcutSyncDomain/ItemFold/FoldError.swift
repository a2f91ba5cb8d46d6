import Foundation

/// Why a batch could not be folded.
public enum FoldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The log's count of covered donations is missing or impossible for the stored row.
    case recountMissing(DonationGroupID, answer: Int?, count: Int)

    public var description: String {
        switch self {
        case .recountMissing(let id, let answer, let count):
            "the donations of \(id) covered by this batch were counted as \(answer.map(String.init) ?? "nothing") of \(count) stored: the fold rows and the log disagree"
        }
    }
}
