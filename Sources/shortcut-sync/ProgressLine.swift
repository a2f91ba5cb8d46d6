import Foundation
import ShortcutSyncStore

/// Progress of long work on standard error: on a terminal a bar redrawn in place, with the
/// rate and the time left; otherwise a plain line every few seconds (for logs and pipes).
actor ProgressLine {
    let task: String
    /// What is counted ("events", "accounts").
    let unit: String
    private let terminal = isatty(STDERR_FILENO) == 1
    private let started = ContinuousClock.now
    private var lastShown: ContinuousClock.Instant?
    private var shownAny = false

    init(task: String, unit: String = "events") {
        self.task = task
        self.unit = unit
    }

    func update(_ done: Int, of total: Int) {
        let now = ContinuousClock.now
        let interval: Duration = terminal ? .milliseconds(200) : .seconds(5)
        if let lastShown, now - lastShown < interval, done < total { return }
        // A log gets no "0 %" line: the first one says how far the work came.
        if !terminal && done == 0 && total > 0 { return }
        lastShown = now
        shownAny = true
        let elapsed = max((now - started).inSeconds, 0.001)
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 1
        let rate = Double(done) / elapsed
        let left = rate > 0 ? Double(max(total - done, 0)) / rate : 0
        let numbers = "\(done)/\(total) \(unit), \(Int(rate)) \(unit == "events" ? "ev" : unit)/s, about \(Self.duration(left)) left"
        if terminal {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            write("\r\(task) [\(bar)] \(Int(fraction * 100))% \(numbers)\u{1B}[K")
        } else {
            write("\(task): \(Int(fraction * 100))% \(numbers)\n")
        }
    }

    func finish() {
        if terminal && shownAny { write("\n") }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60 ? "\(Int(seconds.rounded())) s" : "\(Int(seconds / 60)) min \(Int(seconds.truncatingRemainder(dividingBy: 60))) s"
    }
}
