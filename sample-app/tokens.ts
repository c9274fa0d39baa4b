export const SAMPLE_CONFIG = Symbol('SAMPLE_CONFIG');
