//! The promises the public documentation makes about client recovery, checked after every
//! recovering reset from the inputs and the result alone, independently of how the replay
//! reached it (`Replica.recover`):
//!
//! 1. Objects created locally that were not synced are synced: an object the local changes
//!    created (and did not erase afterwards) and that the local file still held exists after
//!    recovery.
//! 2. An object deleted on the server and only modified by the recovering client stays deleted.
//! 3. An object deleted by the recovering client (its last object operation) is deleted.
//! 4. Conflicting updates to the same field: the client's update is applied. For each field
//!    whose last local operation is an `Update`, with the object neither created nor erased
//!    by the local changes after it and present after recovery, the recovered value is that
//!    update's (a link to an object that is gone reads as null).
//!
//! A violation is a bug in SyncSim's recovery, and fails the run.

import MergeCore

public enum RecoveryPromises {
    /// Checks the four promises. `localChanges` are the changesets recovery replayed, in order;
    /// `preReset` the local state at the reset, `fresh` the fresh copy, `recovered` the state
    /// recovery produced. Returns one sentence per violation, in object order.
    /// - Complexity: O(local instructions + touched objects × log).
    public static func violations(
        localChanges: [Changeset], preReset: Replica, fresh: Replica,
        recovered: Replica
    ) -> [String] {
        struct ObjectFacts {
            var lastCreate = -1
            var lastErase = -1
            var edited = false
        }
        struct FieldFacts {
            var position: Int
            /// The value of the last `Update`; nil when the last operation was not one.
            var updated: Value?
        }
        // Looked up by key; iterated only through sorted keys.
        var objects: [ObjectRef: ObjectFacts] = [:]
        var fields: [FieldRef: FieldFacts] = [:]
        var position = 0
        for changeset in localChanges {
            for instruction in changeset.instructions {
                position += 1
                switch instruction {
                case .createObject(let object):
                    objects[object, default: ObjectFacts()].lastCreate = position
                case .eraseObject(let object):
                    objects[object, default: ObjectFacts()].lastErase = position
                case .update(let object, let field, let value, _):
                    objects[object, default: ObjectFacts()].edited = true
                    fields[FieldRef(object: object, field: field)] = FieldFacts(
                        position: position, updated: value)
                case .addInteger(let object, let field, _):
                    objects[object, default: ObjectFacts()].edited = true
                    fields[FieldRef(object: object, field: field)] = FieldFacts(
                        position: position, updated: nil)
                default:
                    if let object = instruction.object {
                        objects[object, default: ObjectFacts()].edited = true
                    }
                }
            }
        }
        var found: [String] = []
        for object in objects.keys.sorted() {
            let facts = objects[object]!
            if facts.lastCreate > facts.lastErase, preReset.contains(object),
                !recovered.contains(object)
            {
                found.append("\(object) was created offline but is missing after recovery")
            }
            if facts.lastCreate < 0, facts.edited, !fresh.contains(object),
                recovered.contains(object)
            {
                found.append(
                    "\(object) was deleted on the server and only edited offline, but exists after recovery"
                )
            }
            if facts.lastErase > facts.lastCreate, recovered.contains(object) {
                found.append("\(object) was erased offline but exists after recovery")
            }
        }
        for key in fields.keys.sorted() {
            let facts = fields[key]!
            guard let value = facts.updated, recovered.contains(key.object) else { continue }
            let objectFacts = objects[key.object]!
            if objectFacts.lastCreate > facts.position || objectFacts.lastErase > facts.position {
                continue
            }
            var expected = value
            if case .link(let target) = value, !recovered.contains(target) { expected = .null }
            let actual = recovered.value(of: key.object, field: key.field) ?? .null
            if actual != expected {
                found.append(
                    "\(key.object) field \(key.field): the offline update set \(expected), recovery left \(actual)"
                )
            }
        }
        return found
    }
}
