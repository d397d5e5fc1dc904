//! A replica as the changesets that rebuild it: what a fresh copy of a server file carries.

extension Replica {
    /// The changesets that, applied in order to an empty replica, rebuild this one: the schema
    /// (every `AddTable`, then every `AddColumn`, so a link column's target table exists), then
    /// each object in `ObjectRef` order with its fields in field order: `CreateObject`, an
    /// `Update` per scalar field, an `ArrayInsert` per list element (at the end of the list,
    /// links to erased objects included, as the list stores them) and a `SetInsert` per set
    /// element.
    ///
    /// The order depends only on the content, so equal replicas give equal changesets and
    /// equal encodings, whatever their histories. The instructions are split into changesets
    /// of at most `CodecLimits.instructionsPerChangesetMax`; each carries the given metadata.
    ///
    /// SyncSim sizes a fresh copy by this encoding. The reference ships the server's file
    /// instead, so its byte counts differ; what this measures is the content a fresh copy must
    /// carry, in the same compact encoding as every UPLOAD and DOWNLOAD.
    ///
    /// - Complexity: O(content size + objects · log objects).
    public func snapshotChangesets(
        version: UInt64 = 0, originTimestamp: UInt64 = 0, originFileIdent: UInt64 = 0
    ) -> ContiguousArray<Changeset> {
        var instructions = ContiguousArray<Instruction>()
        for table in tables {
            instructions.append(
                .addTable(
                    table: table.table, primaryKeyField: table.primaryKeyField,
                    primaryKeyType: table.primaryKeyType,
                    primaryKeyNullable: table.primaryKeyNullable))
        }
        for table in tables {
            for column in table.columns {
                instructions.append(
                    .addColumn(
                        table: table.table, field: column.field, type: column.type,
                        nullable: column.nullable, collection: column.collection,
                        linkTarget: column.linkTarget))
            }
        }
        var order = Array(objects.records.indices)
        order.sort { objects.records[$0].object < objects.records[$1].object }
        for index in order {
            let record = objects.records[index]
            let object = record.object
            instructions.append(.createObject(object))
            for slot in record.fields {
                switch slot.content {
                case .scalar(let value):
                    instructions.append(
                        .update(object: object, field: slot.field, value: value, isDefault: false))
                case .list(let elements):
                    var size: UInt32 = 0
                    for element in elements {
                        instructions.append(
                            .arrayInsert(
                                object: object, field: slot.field, index: size, value: element,
                                priorSize: size))
                        size += 1
                    }
                case .set(let elements):
                    for element in elements {
                        instructions.append(
                            .setInsert(object: object, field: slot.field, value: element))
                    }
                }
            }
        }
        let limit = Int(CodecLimits.instructionsPerChangesetMax)
        var changesets = ContiguousArray<Changeset>()
        var start = 0
        repeat {
            let end = min(start + limit, instructions.count)
            changesets.append(
                Changeset(
                    version: version, lastIntegratedRemoteVersion: 0,
                    originTimestamp: originTimestamp, originFileIdent: originFileIdent,
                    instructions: ContiguousArray(instructions[start..<end])))
            start = end
        } while start < instructions.count
        return changesets
    }
}

/// The number of bytes the codec's varint takes for `value` (1 … 10): what a changeset's
/// encoding grows or shrinks by when one of its header fields changes, so a size known for one
/// header can be adjusted for another without encoding again.
public func varintByteCount(_ value: UInt64) -> Int {
    value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
}
