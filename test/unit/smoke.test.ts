import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Server } from '@nestjs/microservices';

@Injectable()
class A {
  constructor() {}
}

describe('smoke', () => {
  it('loads nest', () => {
    expect(typeof Server).toBe('function');
    expect(Reflect.getMetadata('design:paramtypes', A)).toEqual([]);
  });
});
