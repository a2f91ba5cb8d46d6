import Foundation
import Logging
import ServiceLifecycle
import ShortcutSyncServer
import ShortcutSyncStore
import UnixSignals

/// Reads the admin token's file again whenever it may have changed, so that a new token is taken
/// and the old one refused without a restart: when `admin rotate-admin-token` announces it
/// (`AdminTokenRotated`, heard within milliseconds by every server of the database), on `SIGHUP`
/// (an operator or a secrets manager that wrote the file itself), and when the LISTEN connection
/// comes back after an outage (an announcement may have been missed).
///
/// A file that cannot be read, or holds a token that could be guessed, leaves the token in use
/// as it is, with an error in the log: a half-written file never locks the operators out. A token
/// given in the environment cannot be read again: the server says so and keeps it.
struct AdminTokenReloader: Service {
    let file: AdminTokenFile?
    let adminToken: AdminToken
    let notifications: any NotificationEvents
    /// Whether `SIGHUP` makes it read the file (`serve`; not servers run inside a test process).
    let onHangUp: Bool
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await listen() }
                if onHangUp {
                    group.addTask {
                        for await _ in await UnixSignalsSequence(trapping: .sighup) { reload(because: "SIGHUP") }
                    }
                }
                await group.waitForAll()
            }
        }
    }

    /// Reads the file again at each announcement, until cancelled.
    private func listen() async {
        try? await notifications.withEvents { events in
            for await event in events {
                switch event {
                case .adminTokenRotated: reload(because: "a new admin token was announced")
                case .listening(resumed: true): reload(because: "the LISTEN connection came back")
                default: break
                }
            }
        }
    }

    /// Takes the file's token if it can be read and is strong enough; logs what it did.
    func reload(because reason: String) {
        guard let file else {
            logger.warning("the admin token was given in the environment and cannot be read again: restart the server to change it",
                           metadata: ["why": "\(reason)"])
            return
        }
        do {
            let token = try file.read()
            if adminToken.replace(with: token) {
                logger.notice("the admin token was read again: the new one is taken, the old one refused", metadata: [
                    "file": "\(file.path)", "why": "\(reason)",
                ])
            }
        } catch {
            logger.error("the admin token file could not be read again; the token in use stays", metadata: [
                "file": "\(file.path)", "why": "\(reason)", "error": "\(error)",
            ])
        }
    }
}
