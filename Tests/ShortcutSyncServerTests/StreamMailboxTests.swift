@testable import ShortcutSyncServer
import ShortcutSyncTestSupport
import Synchronization
import Testing

/// What one open stream holds while its client does not read: one pending poke, never a queue.
@Suite struct StreamMailboxTests {
    @Test func pokesToAClientThatDoesNotReadMergeIntoOne() async {
        let mailbox = StreamMailbox()
        for version in (1...10_000).shuffled() { mailbox.post(.changed(version: Int64(version))) }
        mailbox.post(.keepAlive)
        mailbox.post(.keepAlive)
        mailbox.finish()
        var read: [StreamMessage] = []
        for await message in mailbox { read.append(message) }
        #expect(read == [.changed(version: 10_000), .keepAlive], "the highest version, then one keep-alive, then the end")
    }

    @Test func aWaitingReaderIsHandedTheNextPokeAndEndsWithTheMailbox() async throws {
        let mailbox = StreamMailbox()
        let reading = Task {
            var read: [StreamMessage] = []
            for await message in mailbox { read.append(message) }
            return read
        }
        try await Task.sleep(for: .milliseconds(50))
        mailbox.post(.changed(version: 3))
        try await Task.sleep(for: .milliseconds(50))
        mailbox.finish()
        #expect(try await within(.seconds(10), "the reader to end") { await reading.value }.first == .changed(version: 3))
    }

    @Test func aMailboxEndsWhenItsReaderIsCancelledOrItGoesUnread() async throws {
        let terminated = Terminations()
        let mailbox = StreamMailbox()
        mailbox.onTermination { terminated.count() }
        let reading = Task { for await _ in mailbox {} }
        try await Task.sleep(for: .milliseconds(50))
        reading.cancel()
        try await within(.seconds(10), "the cancelled reader to end") { await reading.value }
        #expect(terminated.value == 1)

        // A response dropped before its body was written: nobody reads, and the hub must forget it.
        do {
            let unread = StreamMailbox()
            unread.onTermination { terminated.count() }
        }
        #expect(terminated.value == 2)
    }
}

/// How many mailboxes ended.
private final class Terminations: Sendable {
    private let ended = Atomic<Int>(0)

    var value: Int { ended.load(ordering: .relaxed) }

    func count() {
        ended.add(1, ordering: .relaxed)
    }
}
