extension EventBody {
    /// The scope of a learning event (a forget or a pause); nil for any other event.
    public var learningScope: LearningScope? {
        switch self {
        case .learningForgotten(let forgotten): forgotten.scope
        case .learningPaused(let paused): paused.scope
        default: nil
        }
    }
}
