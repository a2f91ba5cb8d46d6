import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncServer
import ShortcutSyncStore

/// `admin sign-out`: what `DELETE /v1/devices/{id}` does, for an operator (a lost phone); or, with
/// `--signed-in-with`, for every device a leaked account token signed in.
struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Sign a device out: its token stops working on every server at once, its streams end; its events stay.",
        discussion: """
            Give --device D for one device (a lost phone), or --signed-in-with N for every device still signed in \
            that the account's token N signed in (`admin devices` shows it: SIGNED IN WITH, `signedInWith` in JSON), \
            in one transaction: after a leaked token was rotated (`admin rotate-token`), the devices someone signed in \
            with it. Each gets its deviceSignedOut event.
            """)

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "The device's id.") var device: IdentifierArgument?
    @Option(help: "Sign out every device the account's token of this generation signed in (admin devices: SIGNED IN WITH).")
    var signedInWith: Int?

    func validate() throws {
        guard (device == nil) != (signedInWith == nil) else {
            throw ValidationError("give either --device D or --signed-in-with N")
        }
        // A generation is a PostgreSQL integer: one past it names no token (and would trap on its way there).
        if let signedInWith, signedInWith < 1 || signedInWith > Int(Int32.max) {
            throw ValidationError("--signed-in-with must be a token generation, 1 to \(Int32.max), not \(signedInWith)")
        }
    }

    func run() async throws {
        let id = account.uuid.uuidString.lowercased()
        try await options.withOperator { admin in
            let text: String
            if let device {
                try await admin.signOut(device: device.uuid, account: account.uuid)
                text = options.json
                    ? "{\"accountId\":\"\(id)\",\"deviceId\":\"\(device.uuid.uuidString.lowercased())\",\"signedOut\":true}\n"
                    : "device \(device.uuid.uuidString.lowercased()) is signed out\n"
            } else {
                let generation = signedInWith ?? 0
                let devices = try await admin.signOut(account: account.uuid, signedInWith: generation).devices.map { $0.uuidString.lowercased() }
                text = options.json
                    ? "{\"accountId\":\"\(id)\",\"signedInWith\":\(generation),\"devicesSignedOut\":[\(devices.map { "\"\($0)\"" }.joined(separator: ","))]}\n"
                    : devices.isEmpty
                        ? "no device of account \(id) signed in with token \(generation) is signed in\n"
                        : devices.map { "device \($0) is signed out\n" }.joined()
            }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
