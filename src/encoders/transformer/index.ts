export { TransformerEncoder, type TransformerLoadOptions } from './encoder';
export { parseModelConfig, type Pooling, type TextPrefixes, type TransformerModelConfig } from './config';
export { CONFIG_FILE, MODEL_FILE, TOKENIZER_FILE } from './files';
