/**
 * Jest runs each test file in a vm context whose Float32Array is not the main realm's, in which
 * onnxruntime-node's native binding builds its output tensors; onnxruntime-common's
 * `instanceof Float32Array` check would then reject every output. Give each context the main
 * realm's constructor before anything loads onnxruntime.
 */
import { runInThisContext } from 'node:vm';

globalThis.Float32Array = runInThisContext('Float32Array') as Float32ArrayConstructor;
