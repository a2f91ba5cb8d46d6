import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncServer
import ShortcutSyncStore

/// `admin rotate-token`: a leaked account token is replaced without erasing the account, and
/// with `--sign-out-devices` the devices someone may have signed in with it go too.
struct RotateTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-token",
        abstract: "Give an account a new token; the old one stops working on every server at once. Prints the new one, once.",
        discussion: """
            The old token can no longer sign a device in, but the devices it signed in keep their own tokens: a device \
            someone signed in with a leaked token still pulls, pushes and streams. When the token leaked, add \
            --sign-out-devices: every device of the account is signed out in the same transaction as the rotation \
            (each as `admin sign-out` does: its token refused on every server at once, its streams ended, its \
            deviceSignedOut event in the log; its events stay), and the owner signs their own devices in again with \
            the new token. Without it, only the account token changes (a token seen where it should not be, but not \
            used). `admin devices` shows which token signed each device in (SIGNED IN WITH: token N, `(rotated)` once \
            replaced); `admin sign-out --signed-in-with N` signs out just the devices of token N, later.
            """)

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Flag(help: "Also sign out every device of the account, in the same transaction: for a token that leaked and may have signed devices in.")
    var signOutDevices = false

    func run() async throws {
        let token = Tokens.make(.account)
        try await options.withOperator { admin in
            let rotated = try await admin.rotateAccountToken(account: account.uuid, tokenHash: Tokens.hash(token), signingOutDevices: signOutDevices)
            let id = account.uuid.uuidString.lowercased()
            let text: String
            if options.json {
                let devices = signOutDevices ? ",\"devicesSignedOut\":[\(rotated.devices.map { "\"\($0.uuidString.lowercased())\"" }.joined(separator: ","))]" : ""
                text = "{\"accountId\":\"\(id)\",\"accountToken\":\"\(token)\",\"tokenGeneration\":\(rotated.tokenGeneration)\(devices)}\n"
            } else {
                let devices = signOutDevices
                    ? "\(rotated.devices.count) device\(rotated.devices.count == 1 ? "" : "s") signed out with it\(rotated.devices.isEmpty ? "" : ": ")"
                        + rotated.devices.map { $0.uuidString.lowercased() }.joined(separator: ", ") + "\n"
                    : ""
                text = "account \(id): its new token (token \(rotated.tokenGeneration)) is\n\(token)\n(the old one no longer works; this one is shown only now)\n"
                    + devices
            }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
