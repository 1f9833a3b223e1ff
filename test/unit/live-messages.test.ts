/**
 * The codec every message between replicas goes through (src/live/messages.ts): sealed with the
 * cache key and bound to its channel, old keys accepted during a rotation, replays past a minute
 * dropped, and no record ever sent or accepted in clear. Each drop is reported with its reason.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type LiveMessage, LiveMessages, type RejectReason } from '../../src/live/messages.ts';
import { RECORD_FORMAT, type UpstreamTransaction } from '../../src/model/records.ts';

const CHANNEL = 'gw:live:events:NT-ONE1';
const OTHER = 'gw:live:events:NT-TWO2';
const record = { txRef: 'NT-ONE1', status: 'SUCCESSFUL' } as unknown as UpstreamTransaction;
const RECORD: LiveMessage = { t: 'record', owner: 'replica-a', record, f: RECORD_FORMAT };
const BEAT: LiveMessage = { t: 'beat', owner: 'replica-a', since: 1 };

function codec(keys?: { key: Buffer; oldKeys: Buffer[] }) {
  const rejected: RejectReason[] = [];
  return { messages: new LiveMessages(keys, (reason) => rejected.push(reason)), rejected };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LiveMessages', () => {
  it('with a key: opens its own messages on their channel, and nothing else', () => {
    const key = randomBytes(32);
    const { messages, rejected } = codec({ key, oldKeys: [] });
    const sealed = messages.seal(CHANNEL, RECORD);
    expect(sealed.startsWith('gwe1:')).toBe(true);
    expect(sealed).not.toContain('SUCCESSFUL');
    expect(messages.open(CHANNEL, sealed)).toMatchObject(RECORD);
    // Another channel, another key, clear text, an altered byte: all dropped.
    expect(messages.open(OTHER, sealed)).toBeUndefined();
    const stranger = codec({ key: randomBytes(32), oldKeys: [] }).messages;
    expect(messages.open(CHANNEL, stranger.seal(CHANNEL, RECORD))).toBeUndefined();
    expect(messages.open(CHANNEL, JSON.stringify({ ...RECORD, at: Date.now() }))).toBeUndefined();
    const at = sealed.length - 5;
    const altered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    expect(messages.open(CHANNEL, altered)).toBeUndefined();
    expect(rejected).toEqual([
      'unauthenticated',
      'unauthenticated',
      'unauthenticated',
      'unauthenticated',
    ]);
  });

  it("takes a record in another form (another version's replica) as a sign to read it again", () => {
    const { messages, rejected } = codec({ key: randomBytes(32), oldKeys: [] });
    const older = {
      t: 'record',
      owner: 'replica-a',
      record,
      pushedAt: 5,
    } as unknown as LiveMessage;
    expect(messages.open(CHANNEL, messages.seal(CHANNEL, older))).toEqual({
      t: 'changed',
      owner: 'replica-a',
      pushedAt: 5,
    });
    const other = { ...RECORD, f: 'v0' } as LiveMessage;
    expect(messages.open(CHANNEL, messages.seal(CHANNEL, other))).toEqual({
      t: 'changed',
      owner: 'replica-a',
    });
    expect(rejected).toEqual([]);
  });

  it('during a key rotation, messages sealed with the old key still open', () => {
    const oldKey = randomBytes(32);
    const before = codec({ key: oldKey, oldKeys: [] }).messages;
    const after = codec({ key: randomBytes(32), oldKeys: [oldKey] }).messages;
    expect(after.open(CHANNEL, before.seal(CHANNEL, BEAT))).toMatchObject(BEAT);
  });

  it('drops a sealed message replayed more than a minute later', () => {
    vi.useFakeTimers();
    const { messages, rejected } = codec({ key: randomBytes(32), oldKeys: [] });
    const sealed = messages.seal(CHANNEL, BEAT);
    vi.advanceTimersByTime(59_000);
    expect(messages.open(CHANNEL, sealed)).toMatchObject(BEAT);
    vi.advanceTimersByTime(2_000);
    expect(messages.open(CHANNEL, sealed)).toBeUndefined();
    expect(rejected).toEqual(['stale']);
  });

  it('without a key: never sends a record, and refuses one that arrives', () => {
    const { messages, rejected } = codec();
    expect(messages.sealed).toBe(false);
    expect(() => messages.seal(CHANNEL, RECORD)).toThrow();
    const changed = messages.seal(CHANNEL, { t: 'changed', owner: 'replica-a' });
    expect(messages.open(CHANNEL, changed)).toMatchObject({ t: 'changed' });
    expect(messages.open(CHANNEL, JSON.stringify({ ...RECORD, at: Date.now() }))).toBeUndefined();
    expect(
      messages.open(
        CHANNEL,
        JSON.stringify({ t: 'error', owner: 'x', code: 'NOPE', message: 'm', at: Date.now() }),
      ),
    ).toBeUndefined();
    expect(messages.open(CHANNEL, 'gwe1:abc:def')).toBeUndefined();
    expect(rejected).toEqual(['malformed', 'malformed', 'unauthenticated']);
  });
});
