//! A replica as the changesets that rebuild it: what a fresh copy of a server file carries.

internal import CPrefetch

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
    /// SyncSim sizes a fresh copy by this encoding (`snapshotEncodedByteCount`). The reference
    /// ships the server's file instead, so its byte counts differ; what this measures is the
    /// content a fresh copy must carry, in the same compact encoding as every UPLOAD and
    /// DOWNLOAD.
    ///
    /// - Complexity: O(content size + objects · log objects).
    public func snapshotChangesets(
        version: UInt64 = 0, originTimestamp: UInt64 = 0, originFileIdent: UInt64 = 0
    ) -> ContiguousArray<Changeset> {
        snapshotChangesets(
            version: version, originTimestamp: originTimestamp, originFileIdent: originFileIdent,
            limit: Int(CodecLimits.instructionsPerChangesetMax))
    }

    /// `snapshotChangesets` with changesets of at most `limit` instructions (tests use small
    /// limits to split small states).
    func snapshotChangesets(
        version: UInt64, originTimestamp: UInt64, originFileIdent: UInt64, limit: Int
    ) -> ContiguousArray<Changeset> {
        var instructions = ContiguousArray<Instruction>()
        instructions.reserveCapacity(snapshotInstructionCount())
        forEachSnapshotInstruction { instructions.append($0) }
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

    /// The total length of the encodings of `snapshotChangesets(…)` with the same metadata,
    /// computed as they would be written, without building them.
    ///
    /// - Complexity: O(content size + objects · log objects); allocates only the object order
    ///   and the encoder's string table.
    public func snapshotEncodedByteCount(
        version: UInt64 = 0, originTimestamp: UInt64 = 0, originFileIdent: UInt64 = 0
    ) -> Int {
        snapshotEncodedByteCount(
            version: version, originTimestamp: originTimestamp, originFileIdent: originFileIdent,
            limit: Int(CodecLimits.instructionsPerChangesetMax))
    }

    /// `snapshotEncodedByteCount` for changesets of at most `limit` instructions. One walk of
    /// the state: each changeset's header is counted when its instruction count is known (a
    /// count does not depend on the order the bytes are counted in).
    func snapshotEncodedByteCount(
        version: UInt64, originTimestamp: UInt64, originFileIdent: UInt64, limit: Int
    ) -> Int {
        var counter = ByteCounter()
        var writer = ChangesetWriter()
        var inChangeset = 0
        func countHeader() {
            writer.writeHeader(
                version: version, lastIntegratedRemoteVersion: 0, originTimestamp: originTimestamp,
                originFileIdent: originFileIdent, instructionCount: inChangeset, into: &counter)
        }
        forEachSnapshotInstruction { instruction in
            if inChangeset == limit {
                countHeader()
                writer = ChangesetWriter()
                inChangeset = 0
            }
            writer.write(instruction, into: &counter)
            inChangeset += 1
        }
        countHeader()
        return counter.count
    }

    /// How many instructions the snapshot has.
    func snapshotInstructionCount() -> Int {
        var count = tables.count
        for table in tables { count += table.columns.count }
        for record in objects.records {
            count += 1
            for slot in record.fields {
                switch slot.content {
                case .scalar: count += 1
                case .list(let elements): count += elements.count
                case .set(let elements): count += elements.count
                }
            }
        }
        return count
    }

    /// How many objects ahead the snapshot walk asks for an object's fields.
    static let snapshotPrefetchDistance = 8

    /// Calls `body` with each instruction of the snapshot, in order.
    func forEachSnapshotInstruction(_ body: (Instruction) -> Void) {
        for table in tables {
            body(
                .addTable(
                    table: table.table, primaryKeyField: table.primaryKeyField,
                    primaryKeyType: table.primaryKeyType,
                    primaryKeyNullable: table.primaryKeyNullable))
        }
        for table in tables {
            for column in table.columns {
                body(
                    .addColumn(
                        table: table.table, field: column.field, type: column.type,
                        nullable: column.nullable, collection: column.collection,
                        linkTarget: column.linkTarget))
            }
        }
        // Sorted by reference; integer keys (the common case) compare as plain integers.
        let references = objects.records.map(\.object)
        var order = Array(references.indices)
        order.sort { references[$0] < references[$1] }
        // Read in place: copying each record would retain its fields, per object and walk.
        // The order jumps around the records, and each record's fields live in their own
        // allocation, which a walk of a state not in cache waits for: ask for it a few objects
        // ahead (the load of its address is of the records, which are contiguous).
        let fieldsOffset = MemoryLayout<ObjectRecord>.offset(of: \.fields)!
        objects.records.withUnsafeBufferPointer { records in
            let base = UnsafeRawPointer(records.baseAddress)
            for (position, index) in order.enumerated() {
                if let base, position + Self.snapshotPrefetchDistance < order.count {
                    let ahead = order[position + Self.snapshotPrefetchDistance]
                    let storage = base.load(
                        fromByteOffset: ahead * MemoryLayout<ObjectRecord>.stride + fieldsOffset,
                        as: UnsafeRawPointer.self)
                    syncsim_prefetch(storage)
                    syncsim_prefetch(storage + 64)
                }
                let object = records[index].object
                body(.createObject(object))
                records[index].fields.withUnsafeBufferPointer { fields in
                    for slot in fields.indices {
                        let field = fields[slot].field
                        switch fields[slot].content {
                        case .scalar(let value):
                            body(
                                .update(
                                    object: object, field: field, value: value, isDefault: false))
                        case .list(let elements):
                            var size: UInt32 = 0
                            for element in elements {
                                body(
                                    .arrayInsert(
                                        object: object, field: field, index: size, value: element,
                                        priorSize: size))
                                size += 1
                            }
                        case .set(let elements):
                            for element in elements {
                                body(.setInsert(object: object, field: field, value: element))
                            }
                        }
                    }
                }
            }
        }
    }
}
