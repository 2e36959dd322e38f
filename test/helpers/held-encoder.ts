import type { EncodeResult, EncoderRole } from '../../src/encoders/types';
import { RecordingEncoder } from './recording-encoder';

/**
 * A real encoder whose model runs can be held: after hold(), a run waits before the model until
 * release(), so a test can fill the question queue behind it without racing the model. hold()
 * resolves once a held run has reached the gate. Records its calls as RecordingEncoder does.
 */
export class HeldEncoder extends RecordingEncoder {
  private gate?: Promise<void>;
  private open = () => {};
  private entered = () => {};

  hold(): Promise<void> {
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
    return new Promise<void>((resolve) => (this.entered = resolve));
  }

  release(): void {
    this.gate = undefined;
    this.open();
  }

  override async encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult> {
    const gate = this.gate;
    if (gate) {
      this.entered();
      await gate;
    }
    return super.encode(texts, role, options);
  }
}
