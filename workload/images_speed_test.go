package workload

import "testing"

func BenchmarkImageDataURL(b *testing.B) {
	for _, tt := range []struct {
		name string
		im   Image
	}{
		{"png-512", Image{Width: 512, Height: 512, Format: ImagePNG, Seed: 1}},
		{"jpeg-512", Image{Width: 512, Height: 512, Format: ImageJPEG, Seed: 1}},
		{"png-1024", Image{Width: 1024, Height: 1024, Format: ImagePNG, Seed: 1}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				u, err := tt.im.DataURL()
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(u)))
			}
		})
	}
}
