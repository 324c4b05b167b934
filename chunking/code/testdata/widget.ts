import { Component } from "./component";
import type { Props } from "./props";

/** Widget draws a thing. */
export class Widget extends Component<Props> {
  private count = 0;

  @observable
  render(): string {
    const parts: string[] = [];
    for (let i = 0; i < this.count; i++) {
      parts.push(`item ${i}
of many`);
    }
    return parts.join("\n");
  }

  reset(): void {
    this.count = 0;
  }
}

export interface Shape {
  area(): number;
}

export const area = (s: Shape): number => s.area();

type Id = string | number;
