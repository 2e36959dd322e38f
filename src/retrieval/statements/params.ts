/** How a question vector is sent: a text literal by default; both database clients send binary (Database.vectorParam). */
export type VectorParam = (vector: Float32Array) => unknown;

/** The statement's positional parameters. */
export class Params {
  readonly values: unknown[] = [];
  private readonly vectors = new Map<Float32Array, string>();
  constructor(private readonly vectorParam: VectorParam) {}
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** One parameter per distinct question vector: with one question model, both stages share it. */
  addVector(vector: Float32Array | undefined): string {
    if (!vector) throw new Error('this mode needs the question vector');
    let ref = this.vectors.get(vector);
    if (!ref) {
      ref = this.add(this.vectorParam(vector));
      this.vectors.set(vector, ref);
    }
    return ref;
  }
}
