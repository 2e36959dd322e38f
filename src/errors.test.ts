import { messageOf } from './errors';

describe('messageOf', () => {
  it("says what a thrown value is, an Error's message or a thrown object's name and codes, never [object Object]", () => {
    expect(messageOf(new Error('disk full'))).toBe('disk full');
    // What PGlite's file system throws for a folder it cannot mount.
    expect(messageOf({ name: 'ErrnoError', errno: 20 })).toBe('ErrnoError (errno 20)');
    expect(messageOf({ message: 'refused', code: 'E1' })).toBe('refused');
    expect(messageOf({ code: 'EACCES' })).toBe('error (code EACCES)');
    expect(messageOf({ a: 1 })).toBe('{"a":1}');
    expect(messageOf('plain')).toBe('plain');
    expect(messageOf(undefined)).toBe('undefined');
  });
});
