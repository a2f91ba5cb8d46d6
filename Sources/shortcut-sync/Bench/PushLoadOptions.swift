import ArgumentParser
import ShortcutSyncBench

/// How long and how wide the push part of a benchmark runs.
struct PushLoadOptions: ParsableArguments {
    @Option(help: "Seconds each push scenario and each raw insert run lasts.")
    var seconds: Int = 10

    @Option(help: "Devices holding their streams open for the latency and memory figures.")
    var streams: Int = 10_000

    @Option(help: "Push-to-pull samples for the latency figure.")
    var samples: Int = 300

    func validate() throws {
        if seconds < 1 || streams < 2 || samples < 1 { throw ValidationError("--seconds must be 1 or more, --streams 2 or more, --samples 1 or more") }
    }

    /// These options' load, or with `smoke` a short run's.
    func resolved(smoke: Bool) -> PushBenchmark.Load {
        smoke ? .smoke : PushBenchmark.Load(duration: .seconds(seconds), streams: streams, samples: samples)
    }
}
