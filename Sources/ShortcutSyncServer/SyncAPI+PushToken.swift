import Foundation
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    /// `PUT /v1/device/push-token`: the device can be woken in the background from now on
    /// (DESIGN §5, §6). The token is a secret of sorts (with the key, it reaches the device):
    /// never logged, not even in part.
    func registerPushToken(_ input: Operations.RegisterPushToken.Input) async throws -> Operations.RegisterPushToken.Output {
        let (device, account) = try requireDevice()
        guard case .json(let body) = input.body else { throw APIProblem.malformed("expected a JSON body") }
        let registration: PushTokenRegistration
        switch PushTokenRegistration.validated(service: body.service, token: body.token, topic: body.topic, environment: body.environment) {
        case .success(let valid): registration = valid
        case .failure(let invalid): throw APIProblem.invalid(invalid.errors)
        }
        // The service's key wakes its own apps only: a token for any other would be a way to
        // send silent pushes, signed by this service, to another app.
        guard acceptedTopics.isEmpty || acceptedTopics.contains(registration.topic) else {
            throw APIProblem.invalid([FieldError(pointer: "/topic", detail: "is not an app this service wakes")])
        }
        // A device signed out meanwhile: its token no longer holds.
        guard try await pushTokens.register(registration, device: device, account: account) else { throw APIProblem.unauthorized }
        logger.info("push token registered", metadata: ["account": "\(account)", "device": "\(device)", "environment": "\(registration.environment)"])
        return .noContent(.init())
    }

    /// `DELETE /v1/device/push-token`: no more wakes for this device (also when it had no token).
    func deletePushToken(_ input: Operations.DeletePushToken.Input) async throws -> Operations.DeletePushToken.Output {
        let (device, account) = try requireDevice()
        try await pushTokens.remove(device: device, account: account)
        logger.info("push token removed", metadata: ["account": "\(account)", "device": "\(device)"])
        return .noContent(.init())
    }
}
