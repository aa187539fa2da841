"""The headless live stream: what the Run panel publishes is what a subscriber hears, per stream."""
import numpy as np

from classmap_gui.core.explore.live_stream import LiveStream


def test_frames_reach_subscribers_between_start_and_end():
    live, heard = LiveStream(), []
    live.started.connect(lambda src: heard.append(("started", src)))
    live.frame.connect(lambda crop, result, name, n: heard.append(("frame", crop.shape, result, name, n)))
    live.ended.connect(lambda why: heard.append(("ended", why)))
    crop = np.zeros((8, 8), np.uint8)
    live.publish(crop, None)                      # nothing streams: nothing is heard
    assert heard == [] and live.session == 0
    assert live.start("video.avi") == 1 and live.running and live.source == "video.avi"
    live.publish(crop, "r", "", 3)
    live.end("end of video")
    live.end("stopped")                           # said once
    live.publish(crop, "late", "", 4)             # a frame after the end is dropped
    assert heard == [("started", "video.avi"), ("frame", (8, 8), "r", "", 3), ("ended", "end of video")]
    assert live.frames == 1 and not live.running
    live.start(0)
    assert live.session == 2 and live.frames == 0 and live.source == 0
