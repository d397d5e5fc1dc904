//! Scenario files are JSON. Decoding is strict: an unknown field, a wrong type or a value out of
//! range is an error that names the file, the field (as a dotted path) and the fix.

import Foundation
import SyncEngine

/// A scenario that cannot be used. `description` is the whole message for the user.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public enum Code: UInt16, Sendable {
        case unreadable = 101
        case malformedJSON = 102
        case unknownField = 103
        case wrongType = 104
        case outOfRange = 105
        case inconsistent = 106
    }
    public var code: Code
    public var file: String
    public var field: String
    public var problem: String
    public var fix: String

    public init(code: Code, file: String, field: String, problem: String, fix: String) {
        self.code = code
        self.file = file
        self.field = field
        self.problem = problem
        self.fix = fix
    }

    public var description: String {
        let location = field.isEmpty ? file : "\(file): field '\(field)'"
        return "error \(code.rawValue): \(location): \(problem). Fix: \(fix)"
    }
}

extension Scenario {
    /// Reads and validates a scenario file, with `settings` applied first.
    public static func load(path: String, settings: [ScenarioSetting] = []) throws(ScenarioError)
        -> (scenario: Scenario, bytes: [UInt8])
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(
                code: .unreadable, file: path, field: "",
                problem: "the file does not exist or cannot be read",
                fix: "pass the path of a readable scenario file (see Data/scenarios/)")
        }
        let bytes = [UInt8](data)
        return (try decode(bytes: bytes, file: path, settings: settings), bytes)
    }

    /// Decodes and validates scenario JSON, with `settings` applied to the JSON first (as if the
    /// file said so). `file` names the source in error messages; with settings, the message
    /// names them too.
    public static func decode(bytes: [UInt8], file: String, settings: [ScenarioSetting] = [])
        throws(ScenarioError) -> Scenario
    {
        var root = try parse(bytes: bytes, file: file)
        var file = file
        if !settings.isEmpty {
            file += " with " + settings.map { "--set \($0.text)" }.joined(separator: " ")
            for setting in settings { try setting.apply(to: &root, file: file) }
        }
        return try decode(root: root, file: file)
    }

    /// `what` names the kind of file in the fix ("a scenario file", "a suite file").
    static func parse(bytes: [UInt8], file: String, what: String = "a scenario file")
        throws(ScenarioError) -> JSONValue
    {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch let DecodingError.dataCorrupted(context) {
            let underlying =
                (context.underlyingError as NSError?)?.userInfo["NSDebugDescription"] as? String
            throw ScenarioError(
                code: .malformedJSON, file: file, field: "",
                problem: "not valid JSON (\(underlying ?? context.debugDescription))",
                fix: "correct the JSON syntax; \(what) is one JSON object")
        } catch {
            throw ScenarioError(
                code: .malformedJSON, file: file, field: "",
                problem: "not valid JSON (\(error))",
                fix: "correct the JSON syntax; \(what) is one JSON object")
        }
        return root
    }

    static func decode(root: JSONValue, file: String) throws(ScenarioError) -> Scenario {
        var reader = try FieldReader(root, path: "", file: file)
        var scenario = Scenario()
        scenario.name = try reader.string("name", default: scenario.name)
        scenario.seed = try reader.unsigned(
            "seed", default: scenario.seed, range: 0...(UInt64(1) << 53))
        scenario.clientsCount = UInt32(
            try reader.unsigned(
                "clientsCount", default: UInt64(scenario.clientsCount),
                range: 1...UInt64(Limits.clientsMax)))
        scenario.partitionsCount = UInt32(
            try reader.unsigned(
                "partitionsCount", default: UInt64(scenario.partitionsCount),
                range: 1...UInt64(Limits.partitionsMax)))
        scenario.durationSeconds = try reader.unsigned(
            "durationSeconds", default: scenario.durationSeconds,
            range: 1...Limits.durationSecondsMax)

        if var sub = try reader.object("workload") {
            var w = WorkloadSpec()
            (w.writesPerMinuteOnline, w.writesPerMinuteOffline) = try Self.writeRates(
                &sub, defaults: (w.writesPerMinuteOnline, w.writesPerMinuteOffline))
            w.objectsPerPartition = UInt32(
                try sub.unsigned(
                    "objectsPerPartition", default: UInt64(w.objectsPerPartition),
                    range: 1...UInt64(Limits.objectsPerPartitionMax)))
            w.keyDistribution = try sub.choice("keyDistribution", default: w.keyDistribution)
            w.zipfExponent = try sub.number("zipfExponent", default: w.zipfExponent, range: 0...10)
            w.erasePercent = UInt32(
                try sub.unsigned("erasePercent", default: UInt64(w.erasePercent), range: 0...100))
            w.addIntegerPercent = UInt32(
                try sub.unsigned(
                    "addIntegerPercent", default: UInt64(w.addIntegerPercent), range: 0...100))
            w.listPercent = UInt32(
                try sub.unsigned("listPercent", default: UInt64(w.listPercent), range: 0...100))
            try sub.finish()
            let shares = w.erasePercent + w.addIntegerPercent + w.listPercent
            if shares > 100 {
                throw ScenarioError(
                    code: .inconsistent, file: file, field: "workload.erasePercent",
                    problem:
                        "erasePercent + addIntegerPercent + listPercent is \(shares), above 100",
                    fix: "lower them so that they sum to at most 100")
            }
            scenario.workload = w
        }
        if var sub = try reader.object("connectivity") {
            scenario.connectivity = try Self.connectivity(&sub, defaults: ConnectivitySpec())
            try sub.finish()
        }
        if var sub = try reader.object("network") {
            var n = NetworkSpec()
            n.latencyMillisecondsMedian = try sub.number(
                "latencyMillisecondsMedian", default: n.latencyMillisecondsMedian,
                range: 0.001...600_000)
            n.latencySigma = try sub.number("latencySigma", default: n.latencySigma, range: 0...5)
            n.lossPerMillion = UInt32(
                try sub.unsigned(
                    "lossPerMillion", default: UInt64(n.lossPerMillion), range: 0...1_000_000))
            n.reconnectSecondsMin = try sub.number(
                "reconnectSecondsMin", default: n.reconnectSecondsMin, range: 0.001...86_400)
            n.reconnectSecondsMax = try sub.number(
                "reconnectSecondsMax", default: n.reconnectSecondsMax, range: 0.001...86_400)
            n.bandwidthBytesPerSecond = try sub.unsigned(
                "bandwidthBytesPerSecond", default: n.bandwidthBytesPerSecond,
                range: 0...Limits.bytesPerSecondMax)
            try sub.finish()
            if n.reconnectSecondsMax < n.reconnectSecondsMin {
                throw ScenarioError(
                    code: .inconsistent, file: file, field: "network.reconnectSecondsMax",
                    problem:
                        "reconnectSecondsMax (\(n.reconnectSecondsMax)) is below reconnectSecondsMin (\(n.reconnectSecondsMin))",
                    fix: "make reconnectSecondsMax at least reconnectSecondsMin")
            }
            scenario.network = n
        }
        if var sub = try reader.object("clock") {
            var c = ClockSpec()
            c.skewMillisecondsMax = try sub.unsigned(
                "skewMillisecondsMax", default: c.skewMillisecondsMax,
                range: 0...Time.timestampEpochOffsetMs)
            try sub.finish()
            scenario.clock = c
        }
        if var sub = try reader.object("server") {
            var s = ServerSpec()
            s.backupIntervalSeconds = try sub.unsigned(
                "backupIntervalSeconds", default: s.backupIntervalSeconds,
                range: 0...Limits.durationSecondsMax)
            s.backupRetentionSeconds = try sub.unsigned(
                "backupRetentionSeconds", default: s.backupRetentionSeconds,
                range: 0...Limits.durationSecondsMax)
            s.clientRecoveryEnabled = try sub.bool(
                "clientRecoveryEnabled", default: s.clientRecoveryEnabled)
            s.clientMaxOfflineSeconds = try sub.unsigned(
                "clientMaxOfflineSeconds", default: s.clientMaxOfflineSeconds,
                range: 0...Limits.durationSecondsMax)
            s.historyCompactionIntervalSeconds = try sub.unsigned(
                "historyCompactionIntervalSeconds", default: s.historyCompactionIntervalSeconds,
                range: 1...Limits.durationSecondsMax)
            s.egressBytesPerSecond = try sub.unsigned(
                "egressBytesPerSecond", default: s.egressBytesPerSecond,
                range: 0...Limits.bytesPerSecondMax)
            try sub.finish()
            scenario.server = s
        }
        if var sub = try reader.object("clientReset") {
            var r = ClientResetSpec()
            r.mode = try sub.choice("mode", default: r.mode)
            r.manualHandling = try sub.choice("manualHandling", default: r.manualHandling)
            r.relaunchSecondsMean = try sub.number(
                "relaunchSecondsMean", default: r.relaunchSecondsMean, range: 1...1e9)
            try sub.finish()
            scenario.clientReset = r
        }
        if var sub = try reader.object("crashes") {
            var c = CrashSpec()
            c.appCrashesPerDay = try Self.appCrashRate(&sub, default: c.appCrashesPerDay)
            c.appRelaunchSecondsMean = try sub.number(
                "appRelaunchSecondsMean", default: c.appRelaunchSecondsMean, range: 0.001...1e9)
            c.serverRestartSeconds = try sub.unsigned(
                "serverRestartSeconds", default: c.serverRestartSeconds, range: 1...86_400)
            try sub.finish()
            scenario.crashes = c
        }
        if var sub = try reader.object("swarm") {
            var w = SwarmSpec()
            w.faultsPerDay = try sub.number(
                "faultsPerDay", default: w.faultsPerDay, range: 0...1_440)
            w.undoSecondsMean = try sub.number(
                "undoSecondsMean", default: w.undoSecondsMean, range: 1...1e9)
            w.restorePointSecondsMax = try sub.unsigned(
                "restorePointSecondsMax", default: w.restorePointSecondsMax,
                range: 0...Limits.durationSecondsMax)
            w.restoreDurationSecondsMax = try sub.unsigned(
                "restoreDurationSecondsMax", default: w.restoreDurationSecondsMax,
                range: 0...Limits.durationSecondsMax)
            w.repeatPercent = UInt32(
                try sub.unsigned(
                    "repeatPercent", default: UInt64(w.repeatPercent), range: 0...100))
            if let items = try sub.array("kinds") {
                let allowed = FaultKind.allCases.filter { !$0.endsAnotherFault }
                    .map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                w.kinds = []
                for (index, item) in items.enumerated() {
                    let field = "swarm.kinds[\(index)]"
                    guard case .string(let name) = item, let kind = FaultKind(rawValue: name) else {
                        throw ScenarioError(
                            code: .outOfRange, file: file, field: field,
                            problem: "not a fault kind", fix: "use one of \(allowed)")
                    }
                    guard !kind.endsAnotherFault else {
                        throw ScenarioError(
                            code: .inconsistent, file: file, field: field,
                            problem:
                                "\(name) is not drawn on its own: the swarm ends each drawn \(kind == .restoreAccess ? "revokeAccess and revokeWriteAccess" : "disableClientRecovery") with it",
                            fix: "remove it; use one of \(allowed)")
                    }
                    w.kinds.append(kind)
                }
                if w.kinds.isEmpty {
                    throw ScenarioError(
                        code: .outOfRange, file: file, field: "swarm.kinds",
                        problem: "no fault kind to draw from",
                        fix: "list at least one of \(allowed), or leave kinds out for all of them")
                }
            }
            try sub.finish()
            scenario.swarm = w
        }
        if var sub = try reader.object("sabotage") {
            var b = SabotageSpec()
            b.kind = try sub.choice("kind", default: nil) as SabotageKind
            b.every = try sub.unsigned("every", default: b.every, range: 1...1_000_000)
            try sub.finish()
            scenario.sabotage = b
        }
        if var sub = try reader.object("healing") {
            var h = HealingSpec()
            h.secondsMax = try sub.unsigned(
                "secondsMax", default: h.secondsMax, range: 1...Limits.healingSecondsMax)
            try sub.finish()
            scenario.healing = h
        }
        if let items = try reader.array("faults") {
            guard items.count <= Limits.faultsMax else {
                throw ScenarioError(
                    code: .outOfRange, file: file, field: "faults",
                    problem: "\(items.count) faults, more than \(Limits.faultsMax)",
                    fix: "schedule at most \(Limits.faultsMax) faults")
            }
            for (index, item) in items.enumerated() {
                var sub = try FieldReader(item, path: "faults[\(index)]", file: file)
                let kind: FaultKind = try sub.choice("kind", default: nil)
                let at = try sub.unsigned(
                    "atSeconds", default: nil, range: 0...Limits.durationSecondsMax)
                let percent = try sub.unsigned("partitionsPercent", default: 100, range: 0...100)
                let clientsPercent = try sub.unsigned(
                    "clientsPercent", default: 100, range: 0...100)
                let restorePoint = try sub.unsigned(
                    "restorePointSecondsAgo", default: 0, range: 0...Limits.durationSecondsMax)
                let durationSeconds = try sub.unsigned(
                    "durationSeconds", default: FaultSpec.defaultDurationSeconds(kind),
                    range: (kind == .networkOutage ? 1 : 0)...Limits.durationSecondsMax)
                try sub.finish()
                for (field, owners) in [
                    ("partitionsPercent", [FaultKind.revokeAccess, .revokeWriteAccess]),
                    ("clientsPercent", [.appCrash, .networkOutage]),
                    ("restorePointSecondsAgo", [.restoreFromBackup]),
                    (
                        "durationSeconds",
                        [.networkOutage, .restoreFromBackup, .terminateSync, .breakingSchemaChange]
                    ),
                ] where !owners.contains(kind) && sub.has(field) {
                    let names =
                        owners.dropLast().map(\.rawValue).joined(separator: ", ")
                        + (owners.count > 1 ? " and " : "") + owners.last!.rawValue
                    throw ScenarioError(
                        code: .inconsistent, file: file,
                        field: "faults[\(index)].\(field)",
                        problem: "\(field) applies to \(names) faults only",
                        fix: "remove it, or make the fault's kind \(owners[0].rawValue)")
                }
                if at >= scenario.durationSeconds {
                    throw ScenarioError(
                        code: .outOfRange, file: file, field: "faults[\(index)].atSeconds",
                        problem:
                            "\(at) is not before the end of the run (durationSeconds = \(scenario.durationSeconds))",
                        fix: "schedule faults inside the run, or lengthen durationSeconds")
                }
                if restorePoint > at {
                    throw ScenarioError(
                        code: .outOfRange, file: file,
                        field: "faults[\(index)].restorePointSecondsAgo",
                        problem:
                            "\(restorePoint) s before a fault at \(at) s is before the run's start, where the first backup is taken",
                        fix:
                            "give at most \(at) (the fault's atSeconds), or schedule the fault later"
                    )
                }
                if kind == .breakingSchemaChange,
                    scenario.faults.contains(where: { $0.kind == .breakingSchemaChange })
                {
                    throw ScenarioError(
                        code: .inconsistent, file: file, field: "faults[\(index)].kind",
                        problem:
                            "a second breakingSchemaChange (the schema has one property to remove)",
                        fix: "keep one breakingSchemaChange fault")
                }
                scenario.faults.append(
                    FaultSpec(
                        kind: kind, atSeconds: at, partitionsPercent: UInt32(percent),
                        clientsPercent: UInt32(clientsPercent),
                        restorePointSecondsAgo: restorePoint, durationSeconds: durationSeconds))
            }
        }
        if let items = try reader.array("cohorts") {
            scenario.cohorts = try Self.cohorts(items, inheriting: scenario, file: file)
        }
        try reader.finish()
        return scenario
    }

    /// The write rates of a `workload` object (the scenario's or a cohort's).
    static func writeRates(_ sub: inout FieldReader, defaults: (online: Double, offline: Double))
        throws(ScenarioError) -> (Double, Double)
    {
        (
            try sub.number("writesPerMinuteOnline", default: defaults.online, range: 0...600),
            try sub.number("writesPerMinuteOffline", default: defaults.offline, range: 0...600)
        )
    }

    /// The `appCrashesPerDay` of a `crashes` object (the scenario's or a cohort's).
    static func appCrashRate(_ sub: inout FieldReader, default rate: Double)
        throws(ScenarioError) -> Double
    {
        try sub.number("appCrashesPerDay", default: rate, range: 0...86_400)
    }

    /// A `connectivity` object (the scenario's or a cohort's).
    static func connectivity(_ sub: inout FieldReader, defaults: ConnectivitySpec)
        throws(ScenarioError) -> ConnectivitySpec
    {
        var c = defaults
        c.onlineSecondsMean = try sub.number(
            "onlineSecondsMean", default: c.onlineSecondsMean, range: 1...1e9)
        c.offlineSecondsMean = try sub.number(
            "offlineSecondsMean", default: c.offlineSecondsMean, range: 1...1e9)
        return c
    }

    /// The `cohorts` array: each a name, a share of the clients, and optionally its own
    /// `connectivity`, `workload` write rates and `crashes.appCrashesPerDay` (the scenario's
    /// where it gives none), and `clientReset.mode` and `manualHandling`.
    static func cohorts(_ items: [JSONValue], inheriting scenario: Scenario, file: String)
        throws(ScenarioError) -> [CohortSpec]
    {
        guard items.count <= Limits.cohortsMax else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: "cohorts",
                problem: "\(items.count) cohorts, more than \(Limits.cohortsMax)",
                fix: "list at most \(Limits.cohortsMax) cohorts")
        }
        var cohorts: [CohortSpec] = []
        var percentTotal: UInt64 = 0
        for (index, item) in items.enumerated() {
            let path = "cohorts[\(index)]"
            var sub = try FieldReader(item, path: path, file: file)
            let name = try sub.string("name", default: "")
            let percent = try sub.unsigned("clientsPercent", default: nil, range: 1...100)
            var cohort = CohortSpec(
                name: name, clientsPercent: UInt32(percent), connectivity: scenario.connectivity,
                writesPerMinuteOnline: scenario.workload.writesPerMinuteOnline,
                writesPerMinuteOffline: scenario.workload.writesPerMinuteOffline,
                appCrashesPerDay: scenario.crashes.appCrashesPerDay)
            if var connectivity = try sub.object("connectivity") {
                cohort.connectivity = try Self.connectivity(
                    &connectivity, defaults: cohort.connectivity)
                try connectivity.finish()
            }
            if var reset = try sub.object("clientReset") {
                if reset.has("mode") { cohort.resetMode = try reset.choice("mode", default: nil) }
                if reset.has("manualHandling") {
                    cohort.manualHandling = try reset.choice("manualHandling", default: nil)
                }
                try reset.finish()
            }
            if var crashes = try sub.object("crashes") {
                cohort.appCrashesPerDay = try Self.appCrashRate(
                    &crashes, default: cohort.appCrashesPerDay)
                try crashes.finish()
            }
            if var workload = try sub.object("workload") {
                (cohort.writesPerMinuteOnline, cohort.writesPerMinuteOffline) =
                    try Self.writeRates(
                        &workload,
                        defaults: (cohort.writesPerMinuteOnline, cohort.writesPerMinuteOffline))
                try workload.finish()
            }
            try sub.finish()
            let valid =
                !name.isEmpty && name.count <= 40
                && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
            guard valid, name != CohortSpec.restName else {
                throw ScenarioError(
                    code: .outOfRange, file: file, field: "\(path).name",
                    problem: name.isEmpty
                        ? "a cohort needs a name"
                        : "\"\(name)\" is not a cohort name"
                            + (name == CohortSpec.restName
                                ? " (it names the clients no cohort takes)" : ""),
                    fix:
                        "give 1 to 40 letters, digits, '-' or '_', other than \"\(CohortSpec.restName)\""
                )
            }
            guard !cohorts.contains(where: { $0.name == name }) else {
                throw ScenarioError(
                    code: .inconsistent, file: file, field: "\(path).name",
                    problem: "a second cohort named \"\(name)\"",
                    fix: "give each cohort a name of its own")
            }
            percentTotal += percent
            guard percentTotal <= 100 else {
                throw ScenarioError(
                    code: .inconsistent, file: file, field: "\(path).clientsPercent",
                    problem: "the cohorts' clientsPercent sum to \(percentTotal), above 100",
                    fix:
                        "lower them so that they sum to at most 100 (the clients left over form the rest)"
                )
            }
            cohorts.append(cohort)
        }
        return cohorts
    }
}

/// Reads fields of one JSON object, remembering which were consumed so that unknown (often
/// misspelt) fields are reported instead of silently ignored.
struct FieldReader {
    let object: [String: JSONValue]
    let path: String
    let file: String
    /// The README section that documents the file's fields, named by type errors.
    let section: String
    var consumed: Set<String> = []

    init(_ value: JSONValue, path: String, file: String, section: String = "Scenario format")
        throws(ScenarioError)
    {
        guard case .object(let object) = value else {
            throw ScenarioError(
                code: .wrongType, file: file, field: path.isEmpty ? "(top level)" : path,
                problem: "expected a JSON object", fix: "write it as { ... }")
        }
        self.object = object
        self.path = path
        self.file = file
        self.section = section
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func wrongType(_ key: String, _ expected: String) -> ScenarioError {
        ScenarioError(
            code: .wrongType, file: file, field: name(key),
            problem: "expected \(expected)",
            fix: "give \(expected) (see README, \"\(section)\")")
    }

    mutating func raw(_ key: String) -> JSONValue? {
        consumed.insert(key)
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    mutating func string(_ key: String, default fallback: String) throws(ScenarioError) -> String {
        guard let value = raw(key) else { return fallback }
        guard case .string(let string) = value else { throw wrongType(key, "a string") }
        return string
    }

    /// Whether the object holds `key` with a non-null value.
    func has(_ key: String) -> Bool {
        if let value = object[key] { return value != .null }
        return false
    }

    mutating func bool(_ key: String, default fallback: Bool) throws(ScenarioError) -> Bool {
        guard let value = raw(key) else { return fallback }
        guard case .bool(let flag) = value else { throw wrongType(key, "true or false") }
        return flag
    }

    mutating func number(_ key: String, default fallback: Double, range: ClosedRange<Double>)
        throws(ScenarioError) -> Double
    {
        guard let value = raw(key) else { return fallback }
        guard case .number(let double) = value else { throw wrongType(key, "a number") }
        guard double.isFinite, range.contains(double) else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: name(key),
                problem: "\(double) is outside \(range.lowerBound)...\(range.upperBound)",
                fix: "give a value between \(range.lowerBound) and \(range.upperBound)")
        }
        return double
    }

    mutating func unsigned(_ key: String, default fallback: UInt64?, range: ClosedRange<UInt64>)
        throws(ScenarioError) -> UInt64
    {
        guard let value = raw(key) else {
            if let fallback { return fallback }
            throw ScenarioError(
                code: .wrongType, file: file, field: name(key),
                problem: "the field is required", fix: "add \"\(key)\": <whole number>")
        }
        guard case .number(let double) = value else { throw wrongType(key, "a whole number") }
        guard double.rounded() == double else { throw wrongType(key, "a whole number") }
        guard double >= 0, double <= Double(range.upperBound), let whole = UInt64(exactly: double),
            range.contains(whole)
        else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: name(key),
                problem:
                    "\(formatNumber(double)) is outside \(range.lowerBound)...\(range.upperBound)",
                fix: "give a whole number between \(range.lowerBound) and \(range.upperBound)")
        }
        return whole
    }

    mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, default fallback: T?)
        throws(ScenarioError) -> T
    where T.RawValue == String {
        let allowed = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let value = raw(key) else {
            if let fallback { return fallback }
            throw ScenarioError(
                code: .wrongType, file: file, field: name(key),
                problem: "the field is required", fix: "add \"\(key)\": one of \(allowed)")
        }
        guard case .string(let string) = value else { throw wrongType(key, "one of \(allowed)") }
        guard let parsed = T(rawValue: string) else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: name(key),
                problem: "\"\(string)\" is not a known value", fix: "use one of \(allowed)")
        }
        return parsed
    }

    mutating func object(_ key: String) throws(ScenarioError) -> FieldReader? {
        guard let value = raw(key) else { return nil }
        return try FieldReader(value, path: name(key), file: file, section: section)
    }

    mutating func array(_ key: String) throws(ScenarioError) -> [JSONValue]? {
        guard let value = raw(key) else { return nil }
        guard case .array(let array) = value else { throw wrongType(key, "an array") }
        return array
    }

    /// Reports the first unknown field, in sorted order so the message is deterministic.
    func finish() throws(ScenarioError) {
        let unknown = object.keys.filter { !consumed.contains($0) }.sorted()
        if let first = unknown.first {
            let known = consumed.sorted().joined(separator: ", ")
            throw ScenarioError(
                code: .unknownField, file: file, field: name(first),
                problem: "unknown field",
                fix: "remove it or correct its spelling; known fields here: \(known)")
        }
    }
}

/// One `--set PATH=VALUE`: a field of the scenario's JSON, named by its dotted path of object
/// keys, replaced (or added) before the scenario is decoded, so the strict decoder checks it as
/// if the file held it. A key may name an item of an array the scenario already has, by its
/// index: `faults[0].atSeconds`. `VALUE` is JSON (`20`, `true`, `"manual"`, `[]`), or else a
/// bare string (`manual`).
public struct ScenarioSetting: Sendable, Equatable {
    /// The keys from the top level down, e.g. `["workload", "listPercent"]` or
    /// `["faults[0]", "atSeconds"]`.
    public var path: [String]
    /// The command-line text, `PATH=VALUE`.
    public var text: String
    let value: JSONValue

    /// Parses `PATH=VALUE`; nil without `=`, or with an empty key in the path.
    public init?(_ text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let path = text[..<equals].split(separator: ".", omittingEmptySubsequences: false)
            .map(String.init)
        guard !path.isEmpty, path.allSatisfy({ !$0.isEmpty && Self.item($0) != nil }) else {
            return nil
        }
        let valueText = String(text[text.index(after: equals)...])
        self.path = path
        self.text = text
        self.value =
            (try? JSONDecoder().decode(JSONValue.self, from: Data(valueText.utf8)))
            ?? .string(valueText)
    }

    /// The dotted path, e.g. `workload.listPercent`.
    public var pathText: String { path.joined(separator: ".") }

    /// The value as given, after the first `=`.
    public var valueText: String { String(text[text.index(after: text.firstIndex(of: "=")!)...]) }

    func apply(to root: inout JSONValue, file: String) throws(ScenarioError) {
        try Self.set(value, at: path[...], in: &root, walked: [], file: file)
    }

    private static func set(
        _ value: JSONValue, at path: ArraySlice<String>, in node: inout JSONValue,
        walked: [String], file: String
    ) throws(ScenarioError) {
        guard let key = path.first else {
            node = value
            return
        }
        guard case .object(var object) = node else {
            throw ScenarioError(
                code: .wrongType, file: file,
                field: walked.isEmpty ? "(top level)" : walked.joined(separator: "."),
                problem: "--set goes through it, but it is not a JSON object",
                fix:
                    "set a field of an object, or of an array's item by its index (faults[0].atSeconds), or set the array whole (faults=[])"
            )
        }
        let (name, index) = item(key)!
        guard let index else {
            var child = object[key].flatMap { $0 == .null ? nil : $0 } ?? .object([:])
            object[key] = nil  // keep `child` uniquely referenced while it changes
            try set(value, at: path.dropFirst(), in: &child, walked: walked + [key], file: file)
            object[key] = child
            node = .object(object)
            return
        }
        let field = (walked + [name]).joined(separator: ".")
        guard case .array(var items) = object[name] ?? .array([]) else {
            throw ScenarioError(
                code: .wrongType, file: file, field: field,
                problem: "--set names its item \(index), but it is not a JSON array",
                fix: "name the items of an array only, such as faults[0]")
        }
        guard index < items.count else {
            throw ScenarioError(
                code: .outOfRange, file: file, field: field,
                problem:
                    "--set names its item \(index), but it has \(items.count) item\(items.count == 1 ? "" : "s")",
                fix: items.isEmpty
                    ? "set the whole array (\(name)=[…]) to add items"
                    : "name an item from 0 to \(items.count - 1), or set the whole array (\(name)=[…])"
            )
        }
        object[name] = nil  // keep `items` uniquely referenced while it changes
        try set(value, at: path.dropFirst(), in: &items[index], walked: walked + [key], file: file)
        object[name] = .array(items)
        node = .object(object)
    }

    /// A path key split into its name and the array index it names (`faults[2]`: `("faults",
    /// 2)`); the index is nil for a plain key. Nil for a malformed index (`faults[]`,
    /// `faults[x]`, `faults[1]x`).
    static func item(_ key: String) -> (name: String, index: Int?)? {
        guard let open = key.firstIndex(of: "[") else {
            return key.contains("]") ? nil : (key, nil)
        }
        let name = String(key[..<open])
        let digits = key[key.index(after: open)...].dropLast()
        guard !name.isEmpty, key.last == "]", !digits.isEmpty, digits.count <= 9,
            digits.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(digits)
        else { return nil }
        return (name, index)
    }
}

/// A JSON value that keeps booleans and numbers apart (Foundation's `JSONSerialization` on
/// Linux does not). Integers up to 2^53 are exact as `Double`; larger seeds are rejected by range.
enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Double.self) { self = .number(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }
}

func formatNumber(_ value: Double) -> String {
    value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
